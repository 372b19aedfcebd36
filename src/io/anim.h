/* anim.h: animation files from a sequence of RGB frames: GIF (palette, LZW and frame deltas
 * written here), animated PNG (the PNG pieces of png.h, zlib) and video through the ffmpeg
 * program (MP4 with H.264, or WebM with VP9), fed raw frames through a pipe.
 *
 * Frames are 8-bit RGB, 3 bytes per pixel, rows top to bottom, all w×h. They are pulled from
 * the caller one at a time through an mlc_anim_source, so a long animation never sits in
 * memory: the writers hold two frames at most. The GIF writer asks for some frames twice (its
 * palette is chosen from up to 16 frames spread over the animation before it encodes); a
 * source must give the same pixels each time.
 *
 * Every file is written atomically (output.h): a failure at any point leaves no file, or the
 * previous one, at the path; never a half-written one.
 *
 * Timing: frame k is shown from k/fps to (k+1)/fps seconds after the start, the last one `hold`
 * seconds longer (GIF and APNG, which loop forever; a video does not loop and gets no hold).
 * GIF delays are whole centiseconds: each frame's delay is rounded so that the running sum
 * stays within half a centisecond of the exact time.
 */
#ifndef MODALLOCO_ANIM_H
#define MODALLOCO_ANIM_H

#include <stddef.h>

#include "base.h"

/* Fill `rgb` (3·w·h bytes, owned by the writer) with frame k, 0 <= k < nframes. */
typedef mlc_status (*mlc_anim_source)(void *ctx, int k, unsigned char *rgb, mlc_err *err);

typedef struct mlc_anim_spec {
    int w, h;    /* pixels, 1..65535 (a video needs both even: H.264 and VP9 store 4:2:0) */
    int nframes; /* >= 1 */
    int fps;     /* frames per second, 1..100 */
    double hold; /* extra seconds on the last frame (GIF, APNG), 0..60 */
} mlc_anim_spec;

/* What a writer did, for the caller's report. */
typedef struct mlc_anim_info {
    size_t bytes; /* size of the file written */
    int ncolors;  /* GIF: colours in the palette (<= 255; one more index is transparency) */
    int exact;    /* GIF: every pixel kept its colour (the frames sampled held <= 255) */
} mlc_anim_info;

/* GIF89a, looping forever (NETSCAPE2.0 block): one global palette chosen once: the sampled
 * frames' colours when they are 255 or fewer, else 255 by median cut over a 5-bit-per-channel
 * histogram (each entry the mean of the colours it stands for); every pixel is mapped to its
 * nearest entry (squared RGB distance; ties to the lower index). The first frame is whole;
 * each later one is the rectangle bounding the pixels whose mapped colour changed, pixels that
 * did not change inside it transparent (disposal "do not dispose"). Codes: LZW with 12-bit
 * codes at most and a clear code when the table is full. `info` may be NULL. */
mlc_status mlc_gif_write(const char *path, const mlc_anim_spec *spec, mlc_anim_source src,
                         void *ctx, mlc_anim_info *info, mlc_err *err);

/* APNG (a PNG that plays in browsers; viewers without APNG show the first frame): IHDR, acTL
 * (nframes, plays 0 = forever), then per frame an fcTL (sequence number, the rectangle,
 * delay 1/fps s as the fraction 1/fps, or (1 + round(hold·fps))/fps for the last; dispose
 * "none", blend "source") and its pixels: frame 0 whole in IDAT, each later frame as the
 * rectangle bounding the changed pixels in fdAT (mlc_png_deflate_rows at zlib's default level:
 * level 9 took 3 times as long for 5% less). Lossless. `info` may be NULL. */
mlc_status mlc_apng_write(const char *path, const mlc_anim_spec *spec, mlc_anim_source src,
                          void *ctx, mlc_anim_info *info, mlc_err *err);

/* The ffmpeg program found on PATH: its path into buf (cap bytes) and 1, or 0 when there is
 * none (buf is then left as it was, as it is when it is too small). `name` is the program to
 * look for ("ffmpeg"); a name with a
 * slash is taken as a path. */
int mlc_video_find(const char *name, char *buf, size_t cap);

/* A video by `program` (an ffmpeg found by mlc_video_find): raw RGB frames at fps through a
 * pipe to its standard input; MP4 (H.264 "libx264", yuv420p, CRF 20, moov atom first for web
 * playback) or, for a path ending in ".webm", WebM (VP9 "libvpx-vp9", CRF 32). ffmpeg writes a
 * temporary file beside `path` that is renamed over it when ffmpeg exits successfully.
 * MLC_EINVAL for odd sizes, MLC_ETOOL when ffmpeg cannot be started, stops reading or exits
 * with a failure (its messages go to our standard error). `info` may be NULL. */
mlc_status mlc_video_write(const char *path, const char *program, const mlc_anim_spec *spec,
                           mlc_anim_source src, void *ctx, mlc_anim_info *info, mlc_err *err);

#endif
