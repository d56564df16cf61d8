/* version: sc's version string, SC_VERSION (as 1.2.3), which the Makefile
 * passes from its VERSION (-DSC_VERSION); "unknown" where a file is
 * compiled without it (a linter or an editor reading one file).  The one
 * place for the fallback: --version (kit/cli.c), the User-Agent of
 * sc-fetch and sc-retry, a WARC's warcinfo, sc_version(3). */
#ifndef SC_CORE_VERSION_H
#define SC_CORE_VERSION_H

#ifndef SC_VERSION
#define SC_VERSION "unknown"
#endif

#endif
