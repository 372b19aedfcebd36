/* stop_signal.c: SIGINT/SIGTERM into one flag while a loop runs (stop_signal.h). */
#include "stop_signal.h"

#include <string.h>

static volatile sig_atomic_t caught;

static void on_stop(int sig) {
    caught = sig;
}

void mlc_stop_signals_catch(mlc_stop_signals *saved) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop;
    sigemptyset(&sa.sa_mask);
    caught = 0;
    sigaction(SIGINT, &sa, &saved->old_int);
    sigaction(SIGTERM, &sa, &saved->old_term);
}

void mlc_stop_signals_release(const mlc_stop_signals *saved) {
    sigaction(SIGINT, &saved->old_int, NULL);
    sigaction(SIGTERM, &saved->old_term, NULL);
}

int mlc_stop_signal(void) {
    return caught;
}
