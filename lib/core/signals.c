#include "core/signals.h"

#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>

volatile sig_atomic_t sc_stop_signal;

/* Set by sc_signals_install, before a program's threads start, and read
 * only after: a library's caller, which installs no handler, never writes
 * the flags below (fetchers in two threads would both write writing). */
static bool installed;
static volatile sig_atomic_t writing;
static volatile sig_atomic_t abort_signal; /* second signal seen while writing */
static void (*stop_hook)(void);
static const char *volatile unlink_paths[SC_SIGNALS_UNLINK_SLOTS];

static _Noreturn void abort_now(int sig)
{
	for (int i = 0; i < SC_SIGNALS_UNLINK_SLOTS; i++)
		if (unlink_paths[i])
			unlink(unlink_paths[i]);
	_exit(128 + sig);
}

static void on_signal(int sig)
{
	if (!sc_stop_signal) {
		sc_stop_signal = sig;
		if (stop_hook)
			stop_hook();
		return;
	}
	if (writing)
		abort_signal = sig;
	else
		abort_now(sc_stop_signal);
}

void sc_signals_install(void (*on_stop)(void))
{
	struct sigaction sa;

	stop_hook = on_stop;
	installed = true;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, SIGINT);
	sigaddset(&sa.sa_mask, SIGTERM);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	/* A closed pipe downstream is an error on write, not a silent death. */
	signal(SIGPIPE, SIG_IGN);
}

void sc_signals_unlink_on_abort(int slot, const char *path)
{
	if (slot >= 0 && slot < SC_SIGNALS_UNLINK_SLOTS)
		unlink_paths[slot] = path;
}

void sc_signals_write_begin(void)
{
	if (installed)
		writing = 1;
}

void sc_signals_write_end(void)
{
	if (!installed)
		return;
	writing = 0;
	if (abort_signal)
		abort_now(sc_stop_signal);
}

int sc_signals_exit_status(int status)
{
	return sc_stop_signal ? 128 + sc_stop_signal : status;
}
