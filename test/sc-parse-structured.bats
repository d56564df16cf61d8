#!/usr/bin/env bats
# sc-parse --structured: JSON-LD, microdata, RDFa, Open Graph and Twitter
# cards in extruct 0.14's shapes, against extruct itself on the corpus of
# test/structured/pages (and the HTML of the installed Debian documentation,
# real pages with @role and rel="license"); the KIND:PATH fields, --require
# on them, picking kinds, and the records that are no page.

load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'
load 'lib/page'

bats_require_minimum_version 1.5.0

PAGES="$BATS_TEST_DIRNAME/structured/pages"

setup() {
	cd "$BATS_TEST_TMPDIR" || return
}

# rec FILE: an ok fetch record of a page of the corpus.
rec() {
	page_record "$PAGES/$1" "http://pages.example/$1"
}

@test "agreement with extruct: the corpus (every disagreement listed and explained) and the Debian documentation" {
	run /usr/bin/python3 "$BATS_TEST_DIRNAME/structured/agree.py" "$(command -v sc-parse)" "$PAGES" \
		--expect "$BATS_TEST_DIRNAME/structured/disagree.txt"
	assert_success
	assert_line --regexp '^agree [0-9]+/[0-9]+ pages'
	mkdir docs
	find /usr/share/doc -name '*.html' -type f | sort | awk 'NR % 4 == 0' | head -100 | awk '{ printf "ln -s \"%s\" docs/d%d.html\n", $0, NR }' | sh
	[ "$(ls docs | wc -l)" -ge 40 ]
	run /usr/bin/python3 "$BATS_TEST_DIRNAME/structured/agree.py" "$(command -v sc-parse)" docs
	assert_success
	refute_line --regexp ' (json-ld|microdata|opengraph|rdfa): '
	assert_line --regexp '^agree ([0-9]+)/\1 pages \(100.0%\)$'
}

@test "shapes: json-ld blocks mended, microdata nested and itemref, RDFa, Open Graph pairs, a Twitter card" {
	{ rec shop-product-jsonld.html; rec broken-two-objects.html; rec md-itemref.html; rec og-prefix-custom.html; } >in.jsonl
	sc-parse --structured <in.jsonl >out.jsonl
	[ "$(wc -l <out.jsonl)" -eq 4 ]
	run jq -c '.structured | keys' out.jsonl
	assert_line --index 0 '["json-ld","microdata","opengraph","rdfa","twitter"]'
	run jq -c '.structured["json-ld"] | map(."@type")' out.jsonl
	assert_line --index 0 '["Product","Organization"]'
	assert_line --index 1 '["Organization","WebSite","WebPage"]'
	run jq -c 'select(.url|endswith("itemref.html")) | .structured.microdata
		| [.[0].properties.license, .[2].properties.band.properties.size, .[3].properties.address.properties.addressLocality]' out.jsonl
	assert_output '["http://www.opensource.org/licenses/mit-license.php","12","Oslo"]'
	run jq -c 'select(.url|endswith("og-prefix-custom.html")) | .structured
		| [.opengraph[0].namespace.myns, [.opengraph[0].properties[] | select(.[0] == "video:actor")[1]],
		   .twitter[0]["twitter:image"], .twitter[0]["twitter:app:id:iphone"]]' out.jsonl
	assert_output '["http://example.org/myns#",["https://movies.example/people/1","https://movies.example/people/2"],["https://movies.example/a.jpg","https://movies.example/b.jpg"],"12345"]'
	run jq -r 'select(.url|endswith("og-prefix-custom.html")) | .structured.rdfa[0]["http://example.org/myns#rating"][0]["@value"]' out.jsonl
	assert_output 'PG-13'
}

@test "RDFa: a blank node in rel, rev or property is dropped, the words after it read (it once looped for ever)" {
	page='<html><body><div vocab="http://schema.org/" about="#a" rel="_:x knows" resource="#b">
		<span property="_:p name">A</span></div>
		<div vocab="http://schema.org/" about="#c" rev="_:y knows" resource="#d"></div></body></html>'
	jq -nc --arg b "$page" '{url: "http://pages.example/b", ok: true, status: 200, content_type: "text/html", body: $b}' >in.jsonl
	run -0 timeout 10 sc-parse --structured=rdfa <in.jsonl
	run jq -c '.structured.rdfa | map(del(.["@id"]) | keys[]) | sort' <<<"$output"
	assert_output '["http://schema.org/knows","http://schema.org/knows","http://schema.org/name","http://www.w3.org/ns/rdfa#usesVocabulary"]'
}

@test "fields from structured data: KIND:PATH, NAME[] for all, --require, --structured=KINDS picks" {
	{ rec shop-product-jsonld.html; rec plain-no-markup.html; } >in.jsonl
	local rc=0
	sc-parse -f 'price=jsonld:Product.offers.price' -f 'skus[]=jsonld:Product.offers.sku' \
		-f 'brand=jsonld:*.brand.name' -f 'rating=jsonld:AggregateRating.ratingValue' \
		-f 'og=opengraph:og:image' -f 'card=twitter:card' -f 'h1=h1' --require price <in.jsonl >out.jsonl || rc=$?
	[ "$rc" -eq 3 ] # a record made not ok
	run jq -c '[.price, .skus, .brand, .rating, .og, .card, .h1, .ok, .error.kind?]' out.jsonl
	assert_line --index 0 '[129,["TR3-BLU-42","TR3-RED-43"],"Northpeak","4.6","http://northpeak.example/cdn/shop/products/tr3-blue.jpg?v=1688","summary_large_image","Trail Runner 3 Shoe",true,null]'
	assert_line --index 1 --regexp '^\[null,\[\],null,null,null,null,"Plain",false,'
	run jq -r '.error.message? // .error' <(sed -n 2p out.jsonl)
	assert_output --partial "required field 'price' is null"
	rec md-event-local.html | sc-parse -f 'where=microdata:Event.location.address.addressLocality' \
		-f 'geo=microdata:LocalBusiness.geo.latitude' >o2.jsonl
	run jq -c '[.where, .geo, has("structured")]' o2.jsonl
	assert_output '["Leeds","53.7997",false]'
	rec rdfa-lite-product.html | sc-parse --structured=json-ld,opengraph -f 'p=rdfa:Product.offers.price' -f 'x=h1' >o3.jsonl
	run jq -c '[(.structured | keys), .p]' o3.jsonl
	assert_output '[["json-ld","opengraph"],"19.99"]'
}

@test "records without a page, usage errors, and the library's flag" {
	printf '%s\n' '{"url":"http://x/","ok":false,"error":{"kind":"dns"}}' \
		'{"url":"http://x/a.png","ok":true,"status":200,"content_type":"image/png","body":"PNG"}' >in.jsonl
	run -0 sc-parse --structured <in.jsonl
	assert_line --index 0 --partial '"structured":null'
	assert_line --index 1 --partial '"structured":null'
	run -2 --separate-stderr sc-parse --structured=json-ld,nope </dev/null
	assert_equal "${stderr_lines[0]}" "sc-parse: --structured: 'nope' is not one of json-ld, microdata, rdfa, opengraph, twitter"
	run -2 --separate-stderr sc-parse --structured -f 'structured=h1' </dev/null
	assert_equal "${stderr_lines[0]}" "sc-parse: -f structured: --structured outputs a member by that name; choose another name"
	run -2 --separate-stderr sc-parse -f 'p=jsonld:Product..price' </dev/null
	assert_equal "${stderr_lines[0]}" "sc-parse: -f p: invalid path: empty step in 'Product..price'"
	run -2 --separate-stderr sc-parse --forms --structured </dev/null
	assert_equal "${stderr_lines[0]}" "sc-parse: --forms cannot be combined with -f, --each, --require, --keep-body, --structured, --main, --markdown or --simhash"
	run sc-parse --help
	assert_output --partial '[--structured[=KINDS]]'
	# -j 2: each worker's sc_parser_dup keeps the kinds
	for i in 1 2 3 4 5 6; do rec mixed-everything.html; done | sc-parse -j 2 --structured=twitter >j.jsonl
	run jq -c '.structured' j.jsonl
	assert_equal "${#lines[@]}" 6
	for l in "${lines[@]}"; do assert_equal "$l" '{"twitter":[{"twitter:card":"summary","twitter:title":"Mixed (property attr)"}]}'; done
}
