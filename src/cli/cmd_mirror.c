/* cudaenv mirror SPEC...|--all --to DIR [--platform P,P] [--from runfile|redist]
 * [--components +a,-b] | --check DIR:
 * a directory any static server or shared filesystem can serve as the
 * manifest + files of a site (mirror/mirror.h).  Full binary only but for
 * its table entry. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "cli.h"
#include "core/file.h"
#include "manifest/source.h"
#include "manifest/manifest.h"
#include "manifest/resolve.h"
#include "fetch/fetch.h"
#include "install/manifest_fetch.h"
#include "install/manifest_sig.h"
#include "mirror/mirror.h"
#include "oci/ref.h"

/* the light binary builds only the table entry at the end (cli.h: FULL_ONLY) */
#ifdef CE_FULL

static bool sig_exists(const char *path)
{
    char sig[4400];
    snprintf(sig, sizeof sig, "%s.sig", path);
    return access(sig, F_OK) == 0;
}

enum { OPT_TO = 1, OPT_ALL, OPT_PLATFORM, OPT_CHECK, OPT_CUDNN, OPT_NO_CUDNN, OPT_FROM, OPT_COMPONENTS, OPT_SIGN_KEY, OPT_URL, OPT_REPACK };

static const cli_opt cmd_mirror_opts[] = {
    { "to", 0, true, OPT_TO },
    { "all", 'a', false, OPT_ALL },
    { "platform", 0, true, OPT_PLATFORM },
    { "check", 0, true, OPT_CHECK },
    { "cudnn", 0, true, OPT_CUDNN },
    { "no-cudnn", 0, false, OPT_NO_CUDNN },
    { "from", 0, true, OPT_FROM },
    { "components", 0, true, OPT_COMPONENTS },
    { "sign-key", 0, true, OPT_SIGN_KEY },
    { "url", 0, true, OPT_URL },
    { "repack", 0, true, OPT_REPACK },
    { 0 },
};

/* The source manifest as text (for the JSON it copies) and parsed. */
static int load_source(cli *c, char **text, size_t *len, ce_manifest **m)
{
    char loc[4096];
    int rc = ce_manifest_location(&c->ctx, loc, sizeof loc);
    if (rc) return rc;
    bool url = !strncasecmp(loc, "https://", 8) || !strncasecmp(loc, "http://", 7);
    /* a remote manifest through its local copy: refreshed, signature and
     * date checked; a local one as root under the rule (manifest/source.h) */
    ce_msource src;
    ce_mrefresh res;
    if ((rc = ce_manifest_source(&c->ctx, &src)) || (url && (rc = ce_manifest_refresh(&c->ctx, &src, false, &res))))
        return rc;
    const char *path = src.path;
    rc = ce_file_read(url ? src.path : path, CE_MANIFEST_MAX, text, len);
    if (rc == CE_ERR_NOTFOUND && !url)
        return ce_fail(rc, "manifest %s does not exist; check CUDAENV_MANIFEST / --manifest", path);
    if (rc) return rc;
    return ce_manifest_parse(&c->ctx, *text, *len, url ? loc : path, !url, m);
}

static int split_platforms(const cli_cmd *cmd, char *list, ce_mirror_req *req)
{
    for (char *save = NULL, *p = strtok_r(list, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
        if (strcmp(p, "linux-x86_64") && strcmp(p, "linux-sbsa") && strcmp(p, "linux-aarch64"))
            return cli_usage_error(cmd, "unknown platform '%s': use linux-x86_64, linux-sbsa or linux-aarch64", p);
        if (req->n_platforms == CE_MIRROR_MAX_PLATFORMS)
            return cli_usage_error(cmd, "at most %d platforms", CE_MIRROR_MAX_PLATFORMS);
        req->platforms[req->n_platforms++] = p;
    }
    return req->n_platforms ? 0 : cli_usage_error(cmd, "--platform needs a platform, e.g. linux-x86_64,linux-sbsa");
}

static int cmd_mirror(cli *c, const cli_args *a)
{
    const cli_cmd *cmd = c->cmd;
    const char *check = a->opt[OPT_CHECK], *platforms = a->opt[OPT_PLATFORM];
    const char *const *texts = a->pos;
    ce_mirror_req req = { .cudnn = a->opt[OPT_CUDNN] ? a->opt[OPT_CUDNN] : "", .dir = a->opt[OPT_TO],
                          .all = cli_on(a, OPT_ALL), .no_cudnn = cli_on(a, OPT_NO_CUDNN) };
    size_t nspecs = (size_t)a->n;
    int rc = 0;
    if (check && (nspecs || req.all || req.dir || a->opt[OPT_REPACK]))
        return cli_usage_error(cmd, "--check DIR takes no specs, --all, --to or --repack");
    const char *repack = a->opt[OPT_REPACK];
    if (repack && (req.repack = ce_repack_parse(repack)) == CE_REPACK_NONE)
        return cli_usage_error(cmd, "--repack takes zstd (.tar.zst) or tar (plain .tar), not '%s'", repack);
    if (!check && !req.dir) return cli_usage_error(cmd, "where to? --to DIR");
    if (req.dir && ce_oci_is_ref(req.dir)) {
        if (req.all || platforms || a->opt[OPT_SIGN_KEY] || a->opt[OPT_URL] || a->opt[OPT_FROM] ||
            a->opt[OPT_COMPONENTS] || a->opt[OPT_CUDNN] || req.no_cudnn || repack)
            return cli_usage_error(cmd, "--to oci://REGISTRY/REPO takes SPECs alone (this machine's platform; the "
                                   "config's cuDNN policy, as install): no --all, --platform, --cudnn, --no-cudnn, "
                                   "--from, --components, --sign-key, --url or --repack");
        return cli_mirror_oci(c, req.dir, a->pos, nspecs);
    }
    req.url = a->opt[OPT_URL];
    if (req.url && !ce_manifest_is_remote(req.url))
        return cli_usage_error(cmd, "--url takes the https:// URL nodes fetch DIR/cudaenv.json from, not '%s'", req.url);
    if (a->opt[OPT_SIGN_KEY] && !req.url)
        return cli_usage_error(cmd, "--sign-key signs the place the mirror is served at into its manifest: add "
                               "--url URL (what nodes set as CUDAENV_MANIFEST)");
    /* the files install SPEC would fetch, chosen as install chooses them */
    const char *from = a->opt[OPT_FROM], *components = a->opt[OPT_COMPONENTS];
    if (from && strcmp(from, "runfile") != 0 && strcmp(from, "redist") != 0)
        return cli_usage_error(cmd, "--from takes runfile or redist, not '%s'", from);
    if (from) snprintf(c->ctx.install_from, sizeof c->ctx.install_from, "%s", from);
    if (components && strlen(components) >= sizeof c->ctx.install_components)
        return cli_usage_error(cmd, "--components: the list is too long");
    if (components) snprintf(c->ctx.install_components, sizeof c->ctx.install_components, "%s", components);
    if (c->ctx.install_components[0] && strcmp(c->ctx.install_from, "runfile") == 0)
        return cli_usage_error(cmd, "--components chooses NVIDIA components; the runfile installs its own set");
    if (!check && req.all == (nspecs > 0))
        return cli_usage_error(cmd, req.all ? "SPECs and --all contradict each other"
                                            : "what to mirror? SPEC... (tf-2.14, 11.8) or --all");
    char plist[256];
    snprintf(plist, sizeof plist, "%s", platforms ? platforms : c->ctx.platform);
    if (!check && (rc = split_platforms(cmd, plist, &req))) return rc;

    ce_mirror_stats st;
    if (check) {
        rc = ce_mirror_check(&c->ctx, check, &st);
        if (rc == CE_OK) cli_note(c, "%zu files in %s: all present, sizes and sha256 match", st.files, check);
        return rc ? cli_fail(c, rc) : 0;
    }
    ce_spec *specs = calloc(nspecs + 1, sizeof *specs);
    char *text = NULL;
    size_t len = 0;
    ce_manifest *m = NULL;
    rc = specs ? CE_OK : ce_fail(CE_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < nspecs && !rc; i++) {
        rc = ce_spec_parse(texts[i], &specs[i]);
        if (!rc && specs[i].kind == CE_SPEC_SYSTEM)
            rc = ce_fail(CE_ERR_NOTFOUND, "'system' is the machine's own CUDA; nothing to mirror");
    }
    if (!rc && a->opt[OPT_SIGN_KEY]) rc = ce_manifest_sign_key_check(a->opt[OPT_SIGN_KEY]);
    if (!rc) rc = load_source(c, &text, &len, &m);
    if (!rc) {
        req.src_text = text;
        req.src_len = len;
        req.m = m;
        req.specs = specs;
        req.n_specs = nspecs;
        rc = ce_mirror_build(&c->ctx, &req, &st);
    }
    const char *key = a->opt[OPT_SIGN_KEY];
    char out[4300];
    snprintf(out, sizeof out, "%s/cudaenv.json", req.dir ? req.dir : ".");
    if (!rc && key) {
        rc = ce_manifest_sign_file(key, out);
        if (!rc) cli_note(c, "signed %s.sig with %s", out, key);
    } else if (!rc && sig_exists(out)) {
        cli_warn(c, "%s.sig is from an earlier run and may not match the manifest now: sign it again (--sign-key KEY), or nodes refuse it", out);
    }
    if (!rc && st.repack != CE_REPACK_NONE)
        cli_note(c, "repacked %zu archive%s as %s (%lld bytes; %zu already repacked); NVIDIA's sha256 kept as each "
                 "one's origin", st.repacked, st.repacked == 1 ? "" : "s", ce_repack_suffix(st.repack),
                 st.repack_bytes, st.repack_kept);
    if (!rc)
        cli_note(c, "mirror %s: %zu files (%zu added, %lld bytes; %zu already there); serve it and set "
                 "CUDAENV_MANIFEST=<its URL or path>/cudaenv.json", req.dir, st.files, st.added,
                 st.bytes_fetched, st.kept);
    ce_manifest_free(m);
    free(text);
    free(specs);
    return rc ? cli_fail(c, rc) : 0;
}

#endif /* CE_FULL */

const cli_cmd cli_cmd_mirror = {
    .name = "mirror", .run = FULL_ONLY(cmd_mirror),
    .summary = "a mirror directory for a site (files + manifest)",
    .usage =
        "usage: cudaenv mirror SPEC...|--all --to DIR [--platform P[,P]] [--cudnn VER] [--no-cudnn]\n"
        "                     [--from runfile|redist] [--components +a,-b] [--sign-key KEY --url URL]\n"
        "                     [--repack zstd|tar]\n"
        "       cudaenv mirror --check DIR\n"
        "       cudaenv mirror SPEC... --to oci://REGISTRY/REPO [--insecure]\n"
        "\n"
        "Fetch exactly the files install SPEC would fetch (resume, retry, sha256; files\n"
        "already in the cache are copied, not downloaded) into DIR under NVIDIA's paths:\n"
        "for a release with a redistrib JSON, that JSON (compute/cuda/redist/...) and the\n"
        "components its profile selects beside it (as install: tf for a TensorFlow spec,\n"
        "toolkit for a CUDA spec, --components adjusts), else the runfile; cuDNN's\n"
        "tarball.  Then write DIR/cudaenv.json: a manifest of just those files with\n"
        "relative URLs (and the profiles).  Serve DIR with any static server or share it,\n"
        "then on every machine:\n"
        "  CUDAENV_MANIFEST=https://mirror.lab/cuda/cudaenv.json cudaenv install tf-2.14\n"
        "Running it again adds specs; a file already there is kept only when its sha256\n"
        "matches (a corrupt one is replaced).  Nothing under DIR is followed through a\n"
        "symlink; as root, DIR and its parents must be root's and not group/other-writable\n"
        "(exit 6 naming the path).\n"
        "\n"
        "  --to DIR          the mirror directory (created)\n"
        "  --all             every file the manifest names (for the platforms; components:\n"
        "                    the toolkit profile)\n"
        "  --platform P,P    linux-x86_64, linux-sbsa (default: this machine's)\n"
        "  --cudnn VER, --no-cudnn, --from runfile|redist, --components LIST   as for install\n"
        "  --sign-key KEY    sign DIR/cudaenv.json with this ed25519 private key (PEM):\n"
        "                    DIR/cudaenv.json.sig, which nodes check against their keys;\n"
        "                    needs --url\n"
        "  --url URL         the URL nodes fetch DIR/cudaenv.json from (their\n"
        "                    CUDAENV_MANIFEST), written into it as \"source\" with a \"serial\"\n"
        "                    that grows every run: a node refuses it from elsewhere or older\n"
        "  --repack zstd|tar store each .tar.xz (components, cuDNN) again beside NVIDIA's as\n"
        "                    .tar.zst (decodes ~10x faster than xz: LAN-speed installs) or\n"
        "                    a plain .tar, the same tar inside; cudaenv.json names the\n"
        "                    repacks (sign it: --sign-key) and keeps NVIDIA's url, sha256\n"
        "                    and size as each one's \"origin\"; a rerun keeps repacks that\n"
        "                    still hash right; the mirror remembers the format.  Runfiles\n"
        "                    and NCCL wheels stay as NVIDIA ships them\n"
        "  --check DIR       re-hash every file DIR/cudaenv.json names (components: those\n"
        "                    the mirror holds), only inside DIR: no '..', absolute path or\n"
        "                    symlink, regular files only; exit 5 if any is missing or wrong\n"
        "  --to oci://REGISTRY/REPO   install each SPEC here (as install SPEC), then push it\n"
        "                    (cudaenv push) as REPO:<name> ('+' written '-') and REPO:<SPEC>;\n"
        "                    prints each oci://...@sha256: reference\n",
    .opts = FULL_ONLY(cmd_mirror_opts), .max_pos = -1,
};
