/* cudaenv cache dir|list|clean|prune [--dry-run] [--json]: the downloads in
 * $CUDAENV_ROOT/cache and the unpacked trees in pkgs/ (store/cache.h).
 * clean removes every download (reinstalling then needs the network); prune
 * removes downloads and trees no installed toolchain came from (any file a
 * receipt names is kept).  "freed" counts the blocks removing an item frees:
 * a file another name hard-links (a toolchain's, a mirror's) frees nothing.
 * Names (a file's in cache/ or pkgs/, a receipt's label) are printed escaped
 * on their own line (cli_esc_line): a newline or ESC in one shows as \x0a,
 * \x1b; --json has cJSON's escapes. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "core/file.h"
#include "core/json.h"
#include "manifest/source.h"
#include "store/cache.h"

enum { OPT_DRY = 1, OPT_JSON, OPT_SIZES };

static const cli_opt cmd_cache_opts[] = {
    { "dry-run", 'n', false, OPT_DRY },
    { "json", 0, false, OPT_JSON },
    { "sizes", 0, false, OPT_SIZES },
    { 0 },
};

static const char *kind_name(ce_cache_kind k)
{
    return k == CE_CACHE_TREE ? "unpacked" : k == CE_CACHE_PARTIAL ? "partial" : "download";
}

/* The file name of the manifest's artifact whose sha256 is sha (64 hex):
 * each place the text spells it as a string, the object around it parsed
 * alone (an artifact: {"url", "sha256", "size"}), not the whole manifest
 * (issue 43: cache list's cost flat in the manifest's size). */
static bool label_of(const char *text, size_t len, const char *sha, char *out, size_t outsz)
{
    for (const char *p = text; (p = memmem(p, len - (size_t)(p - text), sha, 64)); p += 64) {
        size_t at = (size_t)(p - text), from, to;
        if (at == 0 || text[at - 1] != '"' || at + 64 >= len || text[at + 64] != '"' ||
            ce_json_object_around(text, len, at, &from, &to) != 1)
            continue;
        cJSON *o = cJSON_ParseWithLength(text + from, to - from);
        const char *h = ce_json_str(o, "sha256"), *url = ce_json_str(o, "url");
        bool named = h && !strncmp(h, sha, 64) && !h[64] && url && ce_url_file_name(url, out, outsz);
        cJSON_Delete(o);
        if (named) return true;
    }
    return false;
}

/* name the downloads no receipt names, from the manifest's text (quietly) */
static void label_from_manifest(cli *c, ce_cache_item *v, size_t n)
{
    size_t unnamed = 0;
    for (size_t i = 0; i < n; i++) unnamed += !v[i].label[0] && v[i].kind != CE_CACHE_TREE && strlen(v[i].name) >= 64;
    if (!unnamed) return;   /* the receipts named them all: no manifest read */
    ce_quiet q;
    ce_quiet_begin(&q, true);
    ce_msource src;
    char *text = NULL;
    size_t len = 0;
    bool have = !ce_manifest_source(&c->ctx, &src) && !ce_file_read(src.path, 256u << 20, &text, &len);
    ce_quiet_end(&q);
    if (!have) return;
    for (size_t i = 0; i < n; i++)
        if (!v[i].label[0] && v[i].kind != CE_CACHE_TREE && strlen(v[i].name) >= 64)
            label_of(text, len, v[i].name, v[i].label, sizeof v[i].label);
    free(text);
}

static int list(cli *c, ce_cache_item *v, size_t n)
{
    long long total = 0, unused = 0;
    if (c->json) {
        cJSON *o = cJSON_CreateObject();
        char dir[4200];
        ce_store_path(&c->ctx, "cache", dir, sizeof dir);
        cli_json_add_str(o, "cache", dir);
        cJSON *arr = cJSON_AddArrayToObject(o, "items");
        for (size_t i = 0; i < n; i++) {
            cJSON *it = cJSON_CreateObject();
            cJSON_AddStringToObject(it, "kind", kind_name(v[i].kind));
            cJSON_AddStringToObject(it, "name", v[i].name);
            cli_json_add_str(it, "file", v[i].label);
            cJSON_AddStringToObject(it, "path", v[i].path);
            cJSON_AddNumberToObject(it, "size", (double)v[i].size);
            cJSON_AddNumberToObject(it, "freeable", (double)v[i].freeable);
            cJSON_AddBoolToObject(it, "used", v[i].used);
            cJSON_AddItemToArray(arr, it);
        }
        return cli_json_print(o);
    }
    printf("%-9s %10s  %-6s %s\n", "KIND", "SIZE", "USED", "NAME");
    for (size_t i = 0; i < n; i++) {
        char sz[32], sha[17];
        cli_size(sz, sizeof sz, (double)v[i].size);
        snprintf(sha, sizeof sha, "%s", v[i].name);
        /* names come from the directory and receipts: escaped, on their one line */
        if (v[i].label[0])
            cli_print("%-9s %10s  %-6s %s (%s...)\n", kind_name(v[i].kind), sz, v[i].used ? "yes" : "no",
                      cli_esc_line(v[i].label), cli_esc_line(sha));
        else
            cli_print("%-9s %10s  %-6s %s\n", kind_name(v[i].kind), sz, v[i].used ? "yes" : "no",
                      cli_esc_line(v[i].name));
        total += v[i].size;
        if (!v[i].used) unused += v[i].size;
    }
    char t[32], u[32];
    cli_size(t, sizeof t, (double)total);
    cli_size(u, sizeof u, (double)unused);
    printf("total %s; %s not used by any toolchain (cudaenv cache prune)\n", t, u);
    return 0;
}

static int sweep(cli *c, ce_cache_item *v, size_t n, bool prune, bool dry)
{
    ce_store_txn txn = CE_STORE_TXN_INIT;
    int rc = ce_store_begin(&c->ctx, &txn);
    if (rc) return cli_fail(c, rc);
    long long freed = 0;
    size_t count = 0;
    for (size_t i = 0; i < n && rc == CE_OK; i++) {
        bool go = prune ? !v[i].used : v[i].kind != CE_CACHE_TREE;
        if (!go) continue;
        char sz[32];
        cli_size(sz, sizeof sz, (double)v[i].size);
        cli_print("%s %s %s (%s)\n", dry ? "would remove" : "removed", kind_name(v[i].kind),
                  cli_esc_line(v[i].label[0] ? v[i].label : v[i].name), sz);
        if (!dry) rc = ce_cache_remove(&v[i]);
        if (rc == CE_OK) { freed += v[i].freeable; count++; }
    }
    ce_store_end(&txn);
    if (rc) return cli_fail(c, rc);
    char f[32];
    cli_size(f, sizeof f, (double)freed);
    cli_note(c, "%s %zu item%s, %s", dry ? "would free" : "freed", count, count == 1 ? "" : "s", f);
    return 0;
}

static int cmd_cache(cli *c, const cli_args *a)
{
    const char *what = a->n ? a->pos[0] : "list";
    bool dry = cli_on(a, OPT_DRY);
    c->json = cli_on(a, OPT_JSON);
    if (!strcmp(what, "dir")) {
        char dir[4200];
        ce_store_path(&c->ctx, "cache", dir, sizeof dir);
        printf("%s\n", dir);
        return 0;
    }
    bool is_list = !strcmp(what, "list"), is_clean = !strcmp(what, "clean"), is_prune = !strcmp(what, "prune");
    if (!is_list && !is_clean && !is_prune)
        return cli_usage_error(c->cmd, "'%s': dir, list, clean or prune", what);
    if (cli_on(a, OPT_SIZES) && !is_list) return cli_usage_error(c->cmd, "--sizes goes with list");
    ce_cache_item *v;
    size_t n;
    /* prune walks every tree: what it says it freed counts links made anywhere; clean
     * removes only downloads and looks at no tree */
    ce_cache_scan_how how = is_clean ? CE_SCAN_DOWNLOADS : is_prune || cli_on(a, OPT_SIZES) ? CE_SCAN_FRESH : CE_SCAN_KEPT;
    int rc = ce_cache_scan(&c->ctx, how, &v, &n);
    if (rc) return cli_fail(c, rc);
    label_from_manifest(c, v, n);
    int out = is_list ? list(c, v, n) : sweep(c, v, n, is_prune, dry);
    free(v);
    return out;
}

const cli_cmd cli_cmd_cache = {
    .name = "cache", .run = cmd_cache,
    .summary = "downloads and unpacked trees: dir, list, clean, prune",
    .usage =
        "usage: cudaenv cache [dir | list [--json] [--sizes] | clean [--dry-run] | prune [--dry-run]]\n"
        "\n"
        "The downloads in $CUDAENV_ROOT/cache (verified files and partial ones) and the\n"
        "unpacked releases in pkgs/ that toolchains are hardlinked from.\n"
        "  dir      print the cache directory\n"
        "  list     each item with its size and whether an installed toolchain came from it\n"
        "  clean    remove every download (a reinstall then downloads again)\n"
        "  prune    remove the downloads and unpacked trees no installed toolchain uses\n"
        "  --sizes  list: walk every unpacked tree for its size and what removing it\n"
        "           frees (list keeps them in pkgs/.cudaenv-sizes, summed again when a\n"
        "           toolchain is installed or removed; links made outside cudaenv\n"
        "           show only here and in prune)\n"
        "  --dry-run, -n   print what would be removed, remove nothing\n",
    .opts = cmd_cache_opts, .max_pos = 1,
};
