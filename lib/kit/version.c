/* version: the --version line of the programs that use libcurl; apart
 * from cli.c so that a program without libcurl does not link it (see
 * cli.h). */
#include <curl/curl.h>
#include <jansson.h>
#include <stdio.h>

#include "kit/cli.h"

void sc_print_version(void)
{
	char libraries[128];

	snprintf(libraries, sizeof(libraries), "libcurl %s, jansson %s",
	         curl_version_info(CURLVERSION_NOW)->version, jansson_version_str());
	sc_print_version_with(libraries);
}
