# shellcheck shell=bash
# Records of pages on disk, as sc-fetch writes them, for the sc-parse suites.

# page_record FILE URL: an ok fetch record of FILE's HTML fetched from URL.
page_record() {
	jq -nc --rawfile b "$1" --arg u "$2" \
		'{url: $u, ok: true, status: 200, content_type: "text/html", body: $b}'
}
