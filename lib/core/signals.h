/* signals: the drain on SIGINT/SIGTERM that every stage of a pipeline shares.
 *
 * Ctrl-C signals every process of a pipeline at once.  The first SIGINT or
 * SIGTERM only sets sc_stop_signal: sc-fetch stops taking input and drains,
 * the later stages keep reading until their input ends, so every record
 * that was produced reaches the end of the pipeline.  A second signal exits
 * at once (status 128 + signal) — but never in the middle of writing a
 * record: sc_record_write brackets its write, and the exit then happens
 * right after the record is whole. */
#ifndef SC_SIGNALS_H
#define SC_SIGNALS_H

#include <signal.h>

/* 0, or the first of SIGINT/SIGTERM received. */
extern volatile sig_atomic_t sc_stop_signal;

/* Installs the handlers (with SA_RESTART, so a blocking read just goes on).
 * on_stop, if not NULL, is called from the handler at the first signal and
 * must be async-signal-safe (e.g. write to a self-pipe). */
void sc_signals_install(void (*on_stop)(void));

/* A path removed if a second signal exits at once (a sink's temporary
 * file); at most a few, and the string must stay valid.  NULL clears. */
void sc_signals_unlink_on_abort(int slot, const char *path);
#define SC_SIGNALS_UNLINK_SLOTS 8

/* Brackets a write that must not be cut by the immediate exit.  Nothing
 * without sc_signals_install: no handler reads the bracket then, and a
 * library's fetchers may write in several threads at once. */
void sc_signals_write_begin(void);
void sc_signals_write_end(void);

/* The exit status for a run that ended normally with status: the signal's
 * 128 + N if a drain was started by one, else status itself. */
int sc_signals_exit_status(int status);

#endif
