/* tests/harness/report_files_check.c — checks the report files a `detgate` run wrote: report.json
 * validates against docs/report-schema.json (the reports room's validator), report.xml (JUnit) and
 * report.html parse as well-formed XML (libxml2), report.md and report.txt are non-empty. Used by
 * the CLI tests. usage: report_files_check SCHEMA DIR  — exit 0 when all hold. */
#include <stdio.h>
#include <string.h>

#include <jansson.h>
#include <libxml/parser.h>

#include "reports/schema_check.h"

static int fail(const char *what, const char *detail)
{
    fprintf(stderr, "report_files_check: %s: %s\n", what, detail);
    return 1;
}

static long file_size(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fclose(f);
    return n;
}

static int check_xml(const char *path)
{
    xmlDocPtr d = xmlReadFile(path, NULL, XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
    if (!d)
        return fail(path, "not well-formed XML");
    int junit = strstr(path, ".xml") != NULL;
    xmlNodePtr root = xmlDocGetRootElement(d);
    int bad = junit && (!root || strcmp((const char *)root->name, "testsuites") != 0);
    xmlFreeDoc(d);
    return bad ? fail(path, "JUnit root element is not <testsuites>") : 0;
}

int main(int argc, char **argv)
{
    if (argc != 3)
        return fail("usage", "report_files_check SCHEMA DIR");
    char path[4096], msg[512];
    json_error_t je;
    json_t *schema = json_load_file(argv[1], 0, &je);
    if (!schema)
        return fail(argv[1], je.text);
    snprintf(path, sizeof path, "%s/report.json", argv[2]);
    json_t *doc = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
    if (!doc)
        return fail(path, je.text);
    int rc = 0;
    if (!sc_validate(schema, doc, msg, sizeof msg))
        rc |= fail(path, msg);
    json_decref(doc);
    json_decref(schema);
    snprintf(path, sizeof path, "%s/report.xml", argv[2]);
    rc |= check_xml(path);
    snprintf(path, sizeof path, "%s/report.html", argv[2]);
    rc |= check_xml(path);
    const char *plain[] = {"report.md", "report.txt"};
    for (int i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "%s/%s", argv[2], plain[i]);
        if (file_size(path) <= 0)
            rc |= fail(path, "missing or empty");
    }
    xmlCleanupParser();
    return rc;
}
