/* sink.c: formatting a job's words for its sink (sink.h). */
#include "sink.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "rollout_io.h"

void mlc_sink_say(const mlc_sink *sink, int to_stdout, const char *fmt, ...) {
    if (!sink || !sink->say) return;
    char buf[1024], *text = buf;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if ((size_t)n >= sizeof buf) { /* a long line: once more into a buffer that holds it */
        if (!(text = mlc_malloc((size_t)n + 1))) return;
        va_start(ap, fmt);
        vsnprintf(text, (size_t)n + 1, fmt, ap);
        va_end(ap);
    }
    sink->say(sink->user, to_stdout, text);
    if (text != buf) mlc_free(text);
}

mlc_status mlc_sink_credibility(const mlc_sink *sink, const mlc_credibility *c, mlc_err *err) {
    if (!sink || !sink->say) return MLC_OK;
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f) return mlc_errf(err, MLC_ENOMEM, "out of memory");
    mlc_print_credibility(f, c);
    if (fclose(f) != 0 || !text) {
        free(text);
        return mlc_errf(err, MLC_ENOMEM, "out of memory");
    }
    sink->say(sink->user, 1, text);
    free(text); /* open_memstream's buffer is the C library's */
    return MLC_OK;
}

int mlc_sink_fail(const mlc_sink *sink, mlc_status s, const mlc_err *err) {
    if (sink && sink->fail) return sink->fail(sink->user, s, err);
    return mlc_exit_code(s);
}

void mlc_sink_note(void *sink, const char *line) {
    mlc_sink_say(sink, 0, "modalloco: %s\n", line);
}
