/* cudaenv self update: the newest release, from the server install.sh took
 * this one from (PREFIX/lib/cudaenv/release.conf), the way install.sh takes
 * it: SHA256SUMS checked against the release key install.sh kept
 * (PREFIX/lib/cudaenv/release-key.pem), then that release's install.sh,
 * whose sha256 the signed SHA256SUMS names, run to unpack the new release
 * beside the running one and switch PREFIX/lib/cudaenv/current to it in one
 * rename (the running binary is never written).  Installs cudaenv did not
 * make (a .deb, a wheel, a build from source) are refused with the command
 * that updates them. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "cli.h"
#include "core/file.h"
#include "core/proc.h"
#include "core/trust.h"
#include "fetch/digest.h"
#include "fetch/fetch.h"
#include "install/manifest_sig.h"

/* the light binary builds only the table entry at the end (cli.h: FULL_ONLY) */
#ifdef CE_FULL

enum { OPT_VERSION = 1, OPT_CHECK };
static const cli_opt cmd_self_opts[] = {
    { "version", 0, true, OPT_VERSION },
    { "check", 0, false, OPT_CHECK },
    { 0 },
};

typedef struct release {
    char tree[CE_PATH_MAX];    /* the running release: .../lib/cudaenv/releases/VER */
    char top[CE_PATH_MAX];     /* .../lib/cudaenv */
    char prefix[CE_PATH_MAX];  /* ... */
    char base[2048];        /* the release server */
    char installer[32];     /* share/cudaenv/INSTALLER: install.sh, deb, pip; "" from source */
} release;

/* path's first line into out (trimmed); false when unreadable. */
static bool first_line(const char *path, char *out, size_t n)
{
    FILE *f = fopen(path, "re");
    if (!f) return false;
    bool ok = fgets(out, (int)n, f) != NULL;
    fclose(f);
    if (ok) out[strcspn(out, "\r\n")] = '\0';
    return ok;
}

static void up(char *path)
{
    char *s = strrchr(path, '/');
    if (s && s != path) *s = '\0';
    else strcpy(path, "/");
}

/* Where the running release lies and how it came (the full binary runs
 * from libexec/cudaenv/, the light one from bin/). */
static int locate(cli *c, release *r)
{
    memset(r, 0, sizeof *r);
    char self[PATH_MAX];
    snprintf(self, sizeof self, "%s", ce_self_dir(&c->ctx));
    size_t sl = strlen(self);
    bool libexec = sl > 16 && strcmp(self + sl - 16, "/libexec/cudaenv") == 0;
    up(self);
    if (libexec) up(self);
    snprintf(r->tree, sizeof r->tree, "%s", self);
    char p[PATH_MAX + 64];
    snprintf(p, sizeof p, "%s/share/cudaenv/INSTALLER", r->tree);
    if (!first_line(p, r->installer, sizeof r->installer)) r->installer[0] = '\0';
    snprintf(r->top, sizeof r->top, "%s", r->tree);
    up(r->top);
    const char *rel = strrchr(r->top, '/');
    if (strcmp(r->installer, "deb") == 0)
        return ce_fail(CE_ERR_USAGE, "this cudaenv came from a .deb (dpkg owns %s): update it with "
                       "sudo apt-get install --only-upgrade cudaenv, or sudo apt install ./cudaenv_VER_ARCH.deb "
                       "of the new release", r->tree);
    if (strcmp(r->installer, "pip") == 0)
        return ce_fail(CE_ERR_USAGE, "this cudaenv is a Python package (%s): update it with "
                       "pipx upgrade cudaenv, uv tool upgrade cudaenv, or pip install -U cudaenv", r->tree);
    if (strcmp(r->installer, "install.sh") != 0 || !rel || strcmp(rel, "/releases") != 0)
        return ce_fail(CE_ERR_USAGE, "this cudaenv (%s) was not installed from a release (no "
                       "share/cudaenv/INSTALLER of install.sh's, or not in PREFIX/lib/cudaenv/releases/): "
                       "update the checkout and make install again, or install a release with "
                       "curl -LsSf BASE/install.sh | sh", r->tree);
    up(r->top);
    snprintf(r->prefix, sizeof r->prefix, "%s", r->top);
    up(r->prefix);
    up(r->prefix);
    char conf[PATH_MAX + 32], line[sizeof r->base - 8];
    snprintf(conf, sizeof conf, "%s/release.conf", r->top);
    const char *env = getenv("CUDAENV_INSTALL_BASE");
    if (env && *env) snprintf(r->base, sizeof r->base, "%s", env);
    else if (first_line(conf, line, sizeof line) && strncmp(line, "base=", 5) == 0 && line[5])
        snprintf(r->base, sizeof r->base, "%s", line + 5);
    else
        return ce_fail(CE_ERR_USAGE, "%s names no release server (base=URL): set CUDAENV_INSTALL_BASE=URL, "
                       "or run install.sh again", conf);
    size_t bl = strlen(r->base);
    while (bl > 1 && r->base[bl - 1] == '/') r->base[--bl] = '\0';
    if (ce_trust_privileged())   /* root replaces what root runs: the place must be root's alone */
        return ce_trust_chain(r->top, "the cudaenv release directory",
                              "install cudaenv as root into a root-owned prefix, or update it as its owner");
    return CE_OK;
}

static bool version_ok(const char *v)
{
    if (!*v || strlen(v) > 64) return false;
    for (const char *p = v; *p; p++)
        if (!strchr("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.+~-", *p)) return false;
    return true;
}

static int fetch(cli *c, const release *r, const char *ver, const char *name, size_t max, char **buf, size_t *len)
{
    char url[2300];
    if (ver) snprintf(url, sizeof url, "%s/%s/%s", r->base, ver, name);
    else snprintf(url, sizeof url, "%s/%s", r->base, name);
    return ce_fetch_text(&c->ctx, url, max, strncmp(r->base, "http://", 7) == 0, buf, len);
}

/* The sha256 SHA256SUMS gives name (out: 64 hex), false when it has none. */
static bool sum_of(const char *sums, const char *name, char out[CE_SHA256_HEX])
{
    size_t nl = strlen(name);
    for (const char *p = sums; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
        const char *e = strchr(p, '\n');
        size_t ll = e ? (size_t)(e - p) : strlen(p);
        if (ll == 66 + nl && p[64] == ' ' && (p[65] == ' ' || p[65] == '*') && memcmp(p + 66, name, nl) == 0) {
            memcpy(out, p, 64);
            out[64] = '\0';
            return ce_sha256_valid(out);
        }
    }
    return false;
}

/* The release's install.sh, checked, into a private file of top; runs it. */
static int run_installer(cli *c, const release *r, const char *ver, const char *script, size_t len)
{
    char tmp[PATH_MAX + 32];
    snprintf(tmp, sizeof tmp, "%s/.self-update.XXXXXX", r->top);
    int fd = mkstemp(tmp);
    if (fd < 0) return ce_fail(CE_ERR_IO, "cannot write into %s: %s", r->top, strerror(errno));
    bool ok = ce_pwrite_all(fd, script, len, 0) == 0;
    ok = close(fd) == 0 && ok;
    if (!ok) {
        unlink(tmp);
        return ce_fail(CE_ERR_IO, "cannot write %s: %s", tmp, strerror(errno));
    }
    char base[sizeof r->base], prefix[sizeof r->prefix], v[80];
    snprintf(base, sizeof base, "%s", r->base);
    snprintf(prefix, sizeof prefix, "%s", r->prefix);
    snprintf(v, sizeof v, "%s", ver);
    char *argv[] = { "sh", tmp, "--prefix", prefix, "--version", v, "--base", base, "-q", NULL };
    ce_proc p = { .path = "/bin/sh", .argv = argv, .out = CE_PROC_TO_STDERR, .keep_stderr = true };
    ce_proc_result res;
    int rc = ce_proc_run(&c->ctx, &p, &res);
    unlink(tmp);
    if (rc) return rc;
    if (res.code == 0) return CE_OK;
    return ce_fail(res.code == 5 ? CE_ERR_INTEGRITY : CE_ERR_OTHER, "the install.sh of cudaenv %s "
                   "failed (exit %d, its message above): cudaenv %s in %s is unchanged", ver, res.code, CE_VERSION,
                   r->prefix);
}

static int cmd_self(cli *c, const cli_args *a)
{
    if (strcmp(a->pos[0], "update") != 0) {
        cli_error(c, "unknown self command '%s' (self update)", a->pos[0]);
        return 2;
    }
    release r;
    int rc = locate(c, &r);
    if (rc) return cli_fail(c, rc);
    char *text = NULL;
    size_t len = 0;
    char ver[80];
    if (a->opt[OPT_VERSION]) {
        snprintf(ver, sizeof ver, "%s", a->opt[OPT_VERSION]);
    } else {
        if ((rc = fetch(c, &r, NULL, "latest", 256, &text, &len))) return cli_fail(c, rc);
        snprintf(ver, sizeof ver, "%.*s", (int)strcspn(text, " \t\r\n"), text);
        free(text);
    }
    if (!version_ok(ver)) {
        cli_error(c, "'%s' (%s) is no release version", ver, a->opt[OPT_VERSION] ? "--version" : "the server's latest");
        return a->opt[OPT_VERSION] ? 2 : 5;
    }
    if (!a->opt[OPT_VERSION] && strcmp(ver, CE_VERSION) == 0) {
        cli_print("cudaenv %s is the newest release (%s/latest)\n", CE_VERSION, r.base);
        return 0;
    }
    if (a->opt[OPT_CHECK]) {
        cli_print("cudaenv %s -> %s: run cudaenv self update\n", CE_VERSION, ver);
        return 0;
    }
    char *sums = NULL, *sig = NULL, *script = NULL;
    size_t sums_len = 0, sig_len = 0, script_len = 0;
    char key[PATH_MAX + 32], what[2400], want[CE_SHA256_HEX], got[CE_SHA256_HEX], tar[200];
    struct utsname u;
    uname(&u);
    const char *arch = strcmp(u.machine, "arm64") == 0 ? "aarch64" : u.machine;
    snprintf(tar, sizeof tar, "cudaenv-%s-linux-%s.tar.gz", ver, arch);
    snprintf(key, sizeof key, "%s/release-key.pem", r.top);
    snprintf(what, sizeof what, "%s/%s/SHA256SUMS", r.base, ver);
    rc = fetch(c, &r, ver, "SHA256SUMS", 64 << 10, &sums, &sums_len);
    if (!rc && access(key, F_OK) == 0) {
        rc = fetch(c, &r, ver, "SHA256SUMS.sig", 1024, &sig, &sig_len);
        if (!rc) rc = ce_sig_verify_key(key, what, sums, sums_len, sig);
    } else if (!rc) {
        cli_note(c, "no release key in %s (install.sh had none): only the checksums are checked", r.top);
    }
    if (!rc && !sum_of(sums, "install.sh", want))
        rc = ce_fail(CE_ERR_INTEGRITY, "%s names no install.sh: not a cudaenv release", what);
    if (!rc && !sum_of(sums, tar, got))
        rc = ce_fail(CE_ERR_NOTFOUND, "%s has no %s: release %s has no build for this machine (%s)", what, tar,
                     ver, arch);
    if (!rc) rc = fetch(c, &r, ver, "install.sh", 1 << 20, &script, &script_len);
    if (!rc) {
        ce_sha256 *h = ce_sha256_new();
        if (!h) rc = CE_ERR_NOMEM;
        else {
            ce_sha256_update(h, script, script_len);
            ce_sha256_final(h, got);
            ce_sha256_free(h);
            if (strcmp(got, want) != 0)
                rc = ce_fail(CE_ERR_INTEGRITY, "%s/%s/install.sh: sha256 %s, SHA256SUMS says %s: refused, "
                             "nothing changed", r.base, ver, got, want);
        }
    }
    if (!rc) rc = run_installer(c, &r, ver, script, script_len);
    free(sums);
    free(sig);
    free(script);
    if (rc) return cli_fail(c, rc);
    cli_print("cudaenv %s -> %s in %s (from %s%s)\n", CE_VERSION, ver, r.prefix, r.base,
              access(key, F_OK) == 0 ? ", SHA256SUMS signature ok" : ", checksums only");
    return 0;
}

#endif /* CE_FULL */

const cli_cmd cli_cmd_self = {
    .name = "self", .run = FULL_ONLY(cmd_self),
    .summary = "update cudaenv itself to the newest release",
    .usage =
        "usage: cudaenv self update [--version VER] [--check]\n"
        "\n"
        "Update a cudaenv that tools/install.sh installed (PREFIX/lib/cudaenv/releases/VER)\n"
        "the way install.sh does: fetch BASE/latest (BASE: the server install.sh used, kept\n"
        "in PREFIX/lib/cudaenv/release.conf; CUDAENV_INSTALL_BASE for a mirror), its\n"
        "SHA256SUMS, checked against the release key install.sh kept\n"
        "(PREFIX/lib/cudaenv/release-key.pem; exit 5 on a bad or missing signature), then\n"
        "that release's install.sh, whose sha256 SHA256SUMS names, which checks the tarball,\n"
        "unpacks it beside the running release and switches PREFIX/lib/cudaenv/current to\n"
        "it in one rename: the running binary is never written, and the previous release\n"
        "stays for a rollback.  Says from which version to which.  A cudaenv from a .deb,\n"
        "a wheel (pipx, uvx) or a build from source is refused (exit 2) with the command\n"
        "that updates it.  As root, PREFIX/lib/cudaenv must be root's (exit 6).\n"
        "\n"
        "  --version VER   that release instead of the newest (also an older one)\n"
        "  --check         say whether a newer release exists; change nothing\n",
    .opts = FULL_ONLY(cmd_self_opts), .min_pos = 1, .max_pos = 1,
    .missing = "self needs a command: cudaenv self update",
};
