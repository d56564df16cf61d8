/* cli: the command-line conventions the four programs share.
 *
 * Exit statuses are the same everywhere (see sc(7)).  A usage error prints
 * "PROG: message" and "Try 'PROG --help' for more information." on stderr
 * and exits SC_EXIT_USAGE.  The options themselves are read with a table
 * (kit/opt.h), whose errors a program prints with sc_usage_error. */
#ifndef SC_CLI_H
#define SC_CLI_H

#include <stdio.h>

enum sc_exit {
	SC_EXIT_OK = 0,       /* every record this program produced is ok */
	SC_EXIT_FAILURE = 1,  /* runtime failure: unwritable output, ... */
	SC_EXIT_USAGE = 2,    /* bad command line */
	SC_EXIT_PARTIAL = 3,  /* ran to the end, but some records it made are not ok */
	SC_EXIT_SIGINT = 130, /* drained after SIGINT */
	SC_EXIT_PIPE = 141,   /* standard output's reader went away (EPIPE): 128 + SIGPIPE */
	SC_EXIT_SIGTERM = 143 /* drained after SIGTERM */
};

/* Prints the usage error and a hint, then exits SC_EXIT_USAGE. */
_Noreturn void sc_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Prints "PROG VERSION (libraries)" on stdout and exits 0; libraries
 * names the versions of the libraries the program uses. */
_Noreturn void sc_print_version_with(const char *libraries);
/* The same for a program that uses libcurl: "(libcurl V, jansson V)".
 * In a file of its own (version.c), so that a program without libcurl
 * (sc-sink) does not link it: libcurl's thirty shared libraries cost
 * 20 ms at every start, which a crawl in rounds pays many times. */
_Noreturn void sc_print_version(void);

/* Prints the usage text on stdout (for --help) and exits 0. */
_Noreturn void sc_print_help(const char *text);

/* A write failed, errno says why.  A pipe whose reader went away (EPIPE:
 * `sc-fetch | head -1`) is no error of ours: exit SC_EXIT_PIPE quietly,
 * the status a shell shows for a process SIGPIPE killed (the programs
 * ignore SIGPIPE, so that they can clean up: temporary files go, atexit
 * runs).  Any other error is fatal: the message, as sc_die formats it, and
 * SC_EXIT_FAILURE. */
_Noreturn void sc_die_write(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Flushes stdout and checks it; an error writing (a full disk) is fatal
 * with SC_EXIT_FAILURE, so it is never silent; a closed pipe is
 * SC_EXIT_PIPE (sc_die_write). */
void sc_close_stdout(void);

/* The end of a run, the same for every program: standard output flushed
 * and checked unless the run already failed (a write error is a message
 * and SC_EXIT_FAILURE; a closed pipe, or a run that returned SC_EXIT_PIPE,
 * is SC_EXIT_PIPE, quietly), then a drain after SIGINT/SIGTERM mapped to
 * 130/143 (sc_signals_exit_status).  main returns what this returns. */
int sc_exit_status(int status);

#endif
