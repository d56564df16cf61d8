/* sc-warc: the commands of the program, one file each (main.c parses the
 * command line and calls one).  Each returns the exit status (sc(7)). */
#ifndef SC_WARC_CMD_H
#define SC_WARC_CMD_H

#include <stdbool.h>
#include <stdint.h>

struct warc_options {
	bool headers;          /* records: http_version and headers members */
	bool quiet;            /* no summary on stderr */
	const char *pages;     /* wacz --pages FILE, or NULL */
	const char *main_page; /* wacz --main-page URL, or NULL */
};

int warc_records(char **files, int nfiles, const struct warc_options *o);
int warc_check(char **files, int nfiles, const struct warc_options *o);
int warc_cdx(char **files, int nfiles, const struct warc_options *o);
int warc_mend(char **files, int nfiles, const struct warc_options *o);
/* wacz OUT FILE...: files[0] is OUT. */
int warc_wacz(char **files, int nfiles, const struct warc_options *o);
int warc_forget(const char *index, char **files, int nfiles, const struct warc_options *o);

/* "sc-warc: FILE:OFFSET: message" on stderr. */
void warc_report(const char *file, uint64_t offset, const char *message);

#endif
