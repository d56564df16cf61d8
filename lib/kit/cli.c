#include "kit/cli.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "core/signals.h"
#include "core/util.h"
#include "core/version.h"

void sc_usage_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", sc_progname);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fprintf(stderr, "Try '%s --help' for more information.\n", sc_progname);
	exit(SC_EXIT_USAGE);
}

void sc_print_version_with(const char *libraries)
{
	printf("%s %s (%s)\n", sc_progname, SC_VERSION, libraries);
	sc_close_stdout();
	exit(SC_EXIT_OK);
}

void sc_print_help(const char *text)
{
	fputs(text, stdout);
	sc_close_stdout();
	exit(SC_EXIT_OK);
}

void sc_die_write(const char *fmt, ...)
{
	va_list ap;
	int saved = errno;

	if (saved == EPIPE)
		exit(SC_EXIT_PIPE);
	va_start(ap, fmt);
	sc_vwarn(fmt, ap); /* errno is still the write's */
	va_end(ap);
	exit(SC_EXIT_FAILURE);
}

int sc_exit_status(int status)
{
	if (status == SC_EXIT_PIPE)
		return status;
	if (status != SC_EXIT_FAILURE && (fflush(stdout) != 0 || ferror(stdout))) {
		if (errno == EPIPE)
			return SC_EXIT_PIPE;
		sc_warn("error writing standard output:");
		status = SC_EXIT_FAILURE;
	}
	return sc_signals_exit_status(status);
}

void sc_close_stdout(void)
{
	if (fflush(stdout) != 0 || ferror(stdout))
		sc_die_write("error writing standard output:");
}
