/* keys.c: the small helpers of the key tables (keys.h). */
#include "keys.h"

#include <stdio.h>
#include <string.h>

int mlc_key_choice_index(const char *choices, const char *name) {
    size_t n = strlen(name);
    int i = 0;
    for (const char *p = choices; p && *p; i++) {
        const char *bar = strchr(p, '|');
        size_t len = bar ? (size_t)(bar - p) : strlen(p);
        if (len == n && strncmp(p, name, n) == 0) return i;
        if (!bar) break;
        p = bar + 1;
    }
    return -1;
}

const char *mlc_key_choice_name(const char *choices, int index, char *buf, size_t n) {
    buf[0] = '\0';
    int i = 0;
    for (const char *p = choices; p && *p && index >= 0; i++) {
        const char *bar = strchr(p, '|');
        size_t len = bar ? (size_t)(bar - p) : strlen(p);
        if (i == index) {
            snprintf(buf, n, "%.*s", (int)len, p);
            break;
        }
        if (!bar) break;
        p = bar + 1;
    }
    return buf;
}
