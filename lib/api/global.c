/* global: sc.h's process-wide set-up of libcurl and libxml2 (sc_global_init
 * and sc_global_cleanup), in a file of its own, so that a program linking
 * libsc.a for the fetcher alone loads no libxml2. */
#include <libxml/parser.h>

#include "api/api.h"
#include "engine/fetch.h"

/* libcurl's set-up is the engines' shared hold (fetch_global.c): held
 * here from sc_global_init to sc_global_cleanup, fetchers made meanwhile
 * do not set libcurl up again.  libxml2's is idempotent. */
int sc_global_init(void)
{
	xmlInitParser();
	return fetch_global_hold() ? SC_OK : SC_ESYSTEM;
}

void sc_global_cleanup(void)
{
	fetch_global_release();
}
