/* sc-warc: WARC files read back: fetch records from them (records), every
 * record verified (check), their CDXJ index (cdx), and a file cut short
 * by a kill made whole again (mend).  See sc-warc(1). */
#include <getopt.h>
#include <jansson.h>
#include <openssl/crypto.h>
#include <stdio.h>
#include <string.h>
#include <zlib.h>

#include "core/signals.h"
#include "core/util.h"
#include "kit/cli.h"
#include "sc-warc.h"

/* A copy of the SYNOPSIS of man/sc-warc.1. */
static const char usage_text[] = "usage: sc-warc records [-q] [--headers] file...\n"
                                 "       sc-warc check [-q] file...\n"
                                 "       sc-warc cdx file...\n"
                                 "       sc-warc mend [-q] file.open...\n"
                                 "       sc-warc -h | -V\n";

enum {
	OPT_HEADERS = 256
};

static const struct option long_options[] = {
	{ "headers", no_argument, NULL, OPT_HEADERS },
	{ "help", no_argument, NULL, 'h' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

void warc_report(const char *file, uint64_t offset, const char *message)
{
	fprintf(stderr, "%s: %s:%llu: %s\n", sc_progname, file, (unsigned long long)offset,
	        message);
}

int main(int argc, char **argv)
{
	struct warc_options o = { 0 };
	int opt, status;

	sc_setprogname(argv[0]);
	while ((opt = getopt_long(argc, argv, "hqV", long_options, NULL)) != -1) {
		switch (opt) {
		case OPT_HEADERS:
			o.headers = true;
			break;
		case 'q':
			o.quiet = true;
			break;
		case 'h':
			sc_print_help(usage_text);
		case 'V': {
			char libraries[160];
			snprintf(libraries, sizeof(libraries), "zlib %s, %s, jansson %s",
			         zlibVersion(), OpenSSL_version(OPENSSL_VERSION),
			         jansson_version_str());
			sc_print_version_with(libraries);
		}
		default:
			sc_usage_hint();
		}
	}
	if (optind >= argc)
		sc_usage_error("no command (records, check, cdx or mend)");
	const char *command = argv[optind++];
	char **files = argv + optind;
	int nfiles = argc - optind;
	if (nfiles == 0)
		sc_usage_error("%s: no file given", command);
	if (o.headers && strcmp(command, "records") != 0)
		sc_usage_error("--headers: only for records");
	sc_signals_install(NULL);
	if (strcmp(command, "records") == 0)
		status = warc_records(files, nfiles, &o);
	else if (strcmp(command, "check") == 0)
		status = warc_check(files, nfiles, &o);
	else if (strcmp(command, "cdx") == 0)
		status = warc_cdx(files, nfiles, &o);
	else if (strcmp(command, "mend") == 0)
		status = warc_mend(files, nfiles, &o);
	else
		sc_usage_error("'%s': not a command (records, check, cdx or mend)", command);
	return sc_exit_status(status);
}
