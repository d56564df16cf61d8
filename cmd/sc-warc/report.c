/* report: how sc-warc tells a bad record, the same for every command:
 * "sc-warc: FILE:OFFSET: message" on standard error. */
#include <stdio.h>

#include "core/util.h"
#include "sc-warc.h"

void warc_report(const char *file, uint64_t offset, const char *message)
{
	fprintf(stderr, "%s: %s:%llu: %s\n", sc_progname, file, (unsigned long long)offset,
	        message);
}
