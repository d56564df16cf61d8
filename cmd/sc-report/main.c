/* sc-report: the figures of a crawl (or of any sc-fetch run) from its
 * metrics lines: a summary, a table per host, a latency histogram, JSON,
 * an HTML page with charts, and thresholds for CI.  See sc-report(1). */
#include <stdio.h>
#include <stdlib.h>

#include "core/signals.h"
#include "core/util.h"
#include "kit/cli.h"
#include "report.h"

/* Exit status 3 (SC_EXIT_PARTIAL): a --fail-if threshold is broken. */
int main(int argc, char **argv)
{
	struct options o = { 0 };
	struct report r;
	int status = SC_EXIT_OK;

	sc_setprogname(argv[0]);
	sc_stdio_hold();
	parse_options(argc, argv, &o);
	sc_signals_install(NULL);
	agg_init(&r);
	if (read_inputs(&r, &o) != 0)
		status = SC_EXIT_FAILURE;
	agg_finish(&r);
	if (r.t.requests == 0)
		sc_warn("no request lines in the input (%llu lines read, %llu malformed)",
		        (unsigned long long)r.t.lines, (unsigned long long)r.t.malformed);
	else if (r.t.malformed)
		sc_warn("%llu malformed lines skipped", (unsigned long long)r.t.malformed);
	if (o.every_s > 0)
		printf("---- final\n");
	if (o.json)
		json_write(stdout, &r, &o);
	else
		text_write(stdout, &r, &o);
	if (o.html && html_write(o.html, &r, &o) != 0)
		status = SC_EXIT_FAILURE;
	if (status == SC_EXIT_OK && thresholds_check(&r, &o) > 0)
		status = SC_EXIT_PARTIAL;
	report_free(&r);
	return sc_exit_status(status);
}
