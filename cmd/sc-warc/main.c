/* sc-warc: WARC files read back: fetch records from them (records), every
 * record verified (check), their CDXJ index (cdx), and a file cut short
 * by a kill made whole again (mend), a dedupe index made to forget
 * their payloads (forget), and a WACZ of them (wacz).  See sc-warc(1). */
#include <jansson.h>
#include <openssl/crypto.h>
#include <stdio.h>
#include <string.h>
#include <zip.h>
#include <zlib.h>

#include "core/signals.h"
#include "core/util.h"
#include "kit/cli.h"
#include "kit/opt.h"
#include "sc-warc.h"

/* A copy of the SYNOPSIS of man/sc-warc.1. */
static const char usage_text[] =
        "usage: sc-warc records [-q] [--headers] file...\n"
        "       sc-warc check [-q] file...\n"
        "       sc-warc cdx file...\n"
        "       sc-warc mend [-q] file.open...\n"
        "       sc-warc forget [-q] index file...\n"
        "       sc-warc wacz [-q] [--pages pages.jsonl] [--main-page url] out.wacz\n"
        "              file...\n"
        "       sc-warc -h | -V\n";

#define AT(member) SC_OPT_AT(struct warc_options, member)
static const struct sc_opt rows[] = {
	SC_OPT_ROW_HELP(NULL),
	SC_OPT_ROW_FLAG("quiet", 'q', AT(quiet)),
	SC_OPT_ROW_VERSION(NULL),
	SC_OPT_ROW_FLAG("headers", 0, AT(headers)),
	{ .name = "pages", .kind = SC_OPT_STRING, .arg = "FILE", AT(pages) },
	{ .name = "main-page", .kind = SC_OPT_STRING, .arg = "URL", AT(main_page) },
	{ 0 },
};

static _Noreturn void print_version(void)
{
	char libraries[160];

	snprintf(libraries, sizeof(libraries), "zlib %s, %s, jansson %s, libzip %s", zlibVersion(),
	         OpenSSL_version(OPENSSL_VERSION), jansson_version_str(), zip_libzip_version());
	sc_print_version_with(libraries);
}

/* Returns the index of the command in argv. */
static int parse_options(int argc, char **argv, struct warc_options *o)
{
	const struct sc_opt_set sets[] = { { rows, o } };
	char err[256];
	int first = sc_opt_parse(sets, 1, argc, argv, err, sizeof(err));

	if (first == SC_OPT_PARSE_HELP)
		sc_print_help(usage_text);
	if (first == SC_OPT_PARSE_VERSION)
		print_version();
	if (first == SC_OPT_PARSE_ERROR)
		sc_usage_error("%s", err);
	if (first >= argc)
		sc_usage_error("no command (records, check, cdx, mend, forget or wacz)");
	if (first + 1 >= argc)
		sc_usage_error("%s: no file given", argv[first]);
	if (strcmp(argv[first], "forget") == 0 && first + 2 >= argc)
		sc_usage_error("forget: an index and the files whose payloads it forgets");
	if (o->headers && strcmp(argv[first], "records") != 0)
		sc_usage_error("--headers: only for records");
	if (o->pages && strcmp(argv[first], "wacz") != 0)
		sc_usage_error("--pages: only for wacz");
	if (o->main_page && strcmp(argv[first], "wacz") != 0)
		sc_usage_error("--main-page: only for wacz");
	if (strcmp(argv[first], "wacz") == 0 && first + 2 >= argc)
		sc_usage_error("wacz: OUT.wacz and the WARC files to package");
	return first;
}

int main(int argc, char **argv)
{
	struct warc_options o = { 0 };
	int status;

	sc_setprogname(argv[0]);
	sc_stdio_hold();
	int first = parse_options(argc, argv, &o);
	const char *command = argv[first];
	char **files = argv + first + 1;
	int nfiles = argc - first - 1;
	sc_signals_install(NULL);
	if (strcmp(command, "records") == 0)
		status = warc_records(files, nfiles, &o);
	else if (strcmp(command, "check") == 0)
		status = warc_check(files, nfiles, &o);
	else if (strcmp(command, "cdx") == 0)
		status = warc_cdx(files, nfiles, &o);
	else if (strcmp(command, "mend") == 0)
		status = warc_mend(files, nfiles, &o);
	else if (strcmp(command, "forget") == 0)
		status = warc_forget(files[0], files + 1, nfiles - 1, &o);
	else if (strcmp(command, "wacz") == 0)
		status = warc_wacz(files, nfiles, &o);
	else
		sc_usage_error("'%s': not a command (records, check, cdx, mend, forget or wacz)",
		               command);
	return sc_exit_status(status);
}
