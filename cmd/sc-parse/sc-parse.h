/* sc-parse: what the files of the program share.
 *
 *   main.c     options, the parser (sc.h's sc_parser_new), the run
 *   pipeline.c the reader, the N parsing workers and the in-order writer
 *
 * The extraction itself is libsc's (sc_parser(3), lib/api/parser.c over
 * lib/parse): sc-parse is a client of the public API, so the two cannot
 * drift. */
#ifndef SC_PARSE_PROGRAM_H
#define SC_PARSE_PROGRAM_H

#include "sc.h"

/* Reads records from fd (named input_name in diagnostics), applies parser
 * to each on jobs threads (each with a sc_parser_dup of it; one job: on
 * this one, with parser itself), writes them in input order.  Returns the
 * exit status. */
int run_pipeline(sc_parser *parser, const char *input_name, int fd, int jobs);

#endif
