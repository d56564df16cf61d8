#include "record/input.h"

#include <stdio.h>
#include <string.h>

#include "record/record.h"

bool sc_input_blank(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r')
			return false;
	return true;
}

void sc_input_item_make(const struct sc_line *line, size_t max_line, struct sc_jsonscan *fast,
                        struct sc_input_item *item)
{
	json_error_t err;

	item->why[0] = '\0';
	item->line = line;
	item->bad = false;
	if (line->too_long) {
		snprintf(item->why, sizeof(item->why), "line longer than %zu bytes", max_line);
	} else {
		item->rec = sc_record_parse(line->text, line->len, fast, &err);
		if (item->rec)
			return;
		snprintf(item->why, sizeof(item->why), "%s", err.text);
	}
	item->rec = sc_record_bad_input(line->number, line->text, line->len, item->why);
	item->bad = true;
}

bool sc_input_item_from_line(const struct sc_lines *r, const struct sc_line *line,
                             struct sc_jsonscan *fast, struct sc_input_item *item)
{
	if (!line->too_long && sc_input_blank(line->text, line->len))
		return false;
	sc_input_item_make(line, sc_lines_max(r), fast, item);
	return true;
}

void sc_input_warning(const struct sc_lines *r, const struct sc_input_item *item, char out[320])
{
	snprintf(out, 320, "%s:%zu: %s", sc_lines_name(r), item->line->number, item->why);
}

int sc_input_each(struct sc_lines *r, sc_input_handler handle, void *ctx)
{
	struct sc_jsonscan fast = { 0 };
	struct sc_line line;
	struct sc_input_item item;
	int rc;

	while ((rc = sc_lines_next(r, &line)) > 0) {
		if (!sc_input_item_from_line(r, &line, &fast, &item))
			continue;
		rc = handle(&item, ctx);
		json_decref(item.rec);
		if (rc != 0)
			break;
	}
	sc_jsonscan_free(&fast);
	return rc;
}
