/* stop_signal.h: SIGINT and SIGTERM caught while a long loop runs (the optimize job's
 * generations, a sweep's runs), so the loop can finish its step, save and stop cleanly instead of
 * dying half-way through a write. The previous handlers come back when the loop ends.
 *
 * One flag for the process: a loop polls mlc_stop_signal() between its steps. Catching is not
 * nested (a sweep runs its jobs in other processes). */
#ifndef MODALLOCO_STOP_SIGNAL_H
#define MODALLOCO_STOP_SIGNAL_H

#include <signal.h>

typedef struct mlc_stop_signals {
    struct sigaction old_int, old_term; /* the handlers before mlc_stop_signals_catch */
} mlc_stop_signals;

/* Clear the flag and catch SIGINT and SIGTERM into it until mlc_stop_signals_release. */
void mlc_stop_signals_catch(mlc_stop_signals *saved);
/* Restore the handlers saved by mlc_stop_signals_catch (the flag keeps its value). */
void mlc_stop_signals_release(const mlc_stop_signals *saved);
/* The last signal caught (SIGINT or SIGTERM) since mlc_stop_signals_catch; 0: none. */
int mlc_stop_signal(void);

#endif
