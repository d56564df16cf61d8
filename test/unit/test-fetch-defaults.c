/* Unit tests for the defaults of the fetch options (lib/engine/fetch_opts):
 * each row's default, read from fetch_options_init at the row's place,
 * is a value its own row accepts (within its bounds).  With --list it
 * prints instead, a line a row, "NAME DEFAULT" in the option's own units
 * (seconds for a SECONDS row, "on"/"off" for a flag, "none" for no
 * value), which test/libsc.bats compares with sc_fetcher(3)'s table. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "engine/fetch.h"
#include "kit/opt.h"
#include "tap.h"

/* The double at the row's place (copied: the place is bytes of the struct). */
static double number_at(const struct fetch_options *o, const struct sc_opt *row)
{
	double v;

	memcpy(&v, (const char *)o + row->offset, sizeof(v));
	return v;
}

/* The integer at the row's place, of whichever width it has. */
static long long whole_at(const struct fetch_options *o, const struct sc_opt *row)
{
	const char *p = (const char *)o + row->offset;

	if (row->size == sizeof(int)) {
		int v;
		memcpy(&v, p, sizeof(v));
		return v;
	}
	int64_t v;
	memcpy(&v, p, sizeof(v));
	return v;
}

/* The default of row as its option's argument would say it. */
static void default_text(const struct fetch_options *o, const struct sc_opt *row, char *out,
                         size_t size)
{
	const char *p = (const char *)o + row->offset;

	switch (row->kind) {
	case SC_OPT_FLAG:
		snprintf(out, size, "%s", *(const bool *)p ? "on" : "off");
		break;
	case SC_OPT_WHOLE:
		snprintf(out, size, "%lld", whole_at(o, row));
		break;
	case SC_OPT_SECONDS:
		snprintf(out, size, "%g", (double)whole_at(o, row) / 1000.0);
		break;
	case SC_OPT_NUMBER:
		snprintf(out, size, "%g", number_at(o, row));
		break;
	case SC_OPT_COPY:
	case SC_OPT_STRING:
		snprintf(out, size, "%s",
		         *(const char *const *)p ? *(const char *const *)p : "none");
		break;
	default: /* the calls: -H, -A, --contact, --warc-info, --robots-agent,
	          * --adaptive and --no-adaptive */
		if (strcmp(row->name, "header") == 0)
			snprintf(out, size, "%s", o->headers ? "some" : "none");
		else if (strcmp(row->name, "warc-info") == 0)
			snprintf(out, size, "%s", o->warc_info ? "some" : "none");
		else if (strcmp(row->name, "user-agent") == 0)
			snprintf(out, size, "%s", o->user_agent);
		else if (strcmp(row->name, "contact") == 0)
			snprintf(out, size, "%s", o->contact ? o->contact : "none");
		else if (strcmp(row->name, "robots-agent") == 0)
			snprintf(out, size, "%s", o->robots_agent ? o->robots_agent : "none");
		else
			snprintf(out, size, "%s", o->adaptive == (row->tag == 1) ? "on" : "off");
	}
}

/* Whether the default is one the row's own parser would take. */
static bool within_bounds(const struct fetch_options *o, const struct sc_opt *row)
{
	switch (row->kind) {
	case SC_OPT_WHOLE:
		return whole_at(o, row) >= row->whole.min && whole_at(o, row) <= row->whole.max;
	case SC_OPT_SECONDS: {
		double s = (double)whole_at(o, row) / 1000.0;
		return s >= row->number.min && s <= row->number.max;
	}
	case SC_OPT_NUMBER:
		return number_at(o, row) >= row->number.min && number_at(o, row) <= row->number.max;
	default:
		return true;
	}
}

int main(int argc, char **argv)
{
	struct fetch_options o;
	char text[256];

	fetch_options_init(&o);
	bool list = argc > 1 && strcmp(argv[1], "--list") == 0;
	for (const struct sc_opt *row = fetch_option_rows; row->name; row++) {
		default_text(&o, row, text, sizeof(text));
		if (list) {
			printf("%s %s\n", row->name, text);
			continue;
		}
		/* 0 for an option whose 0 means "none" (--per-host, --rate,
		 * --seed, ...) is a value of its own, within the bounds too; an
		 * option whose values start above 0 is unset at 0 (--warc-max-size:
		 * one file), which the user cannot ask for. */
		bool unset =
		        strcmp(text, "0") == 0 && row->kind == SC_OPT_WHOLE && row->whole.min > 0;
		ok(within_bounds(&o, row) || unset, "--%s: its default %s is within its bounds",
		   row->name, text);
	}
	fetch_options_free(&o);
	return list ? 0 : tap_done();
}
