/* global: sc.h's process-wide set-up of libcurl and libxml2 (sc_global_init
 * and sc_global_cleanup), in a file of its own, so that a program linking
 * libsc.a for the fetcher alone loads no libxml2. */
#include <curl/curl.h>
#include <libxml/parser.h>

#include "api/api.h"

/* libcurl counts its initialisations, and libxml2's is idempotent: each
 * call of sc_global_init is matched by sc_global_cleanup's. */
int sc_global_init(void)
{
	xmlInitParser();
	return curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK ? SC_OK : SC_ESYSTEM;
}

void sc_global_cleanup(void)
{
	curl_global_cleanup();
}
