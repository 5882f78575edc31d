/* Signed manifests (manifest_sig.h). */
#include "manifest_sig.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/pem.h>

#include "core/config.h"
#include "core/file.h"
#include "manifest/source.h"
#include "core/trust.h"

/* sig text -> 64 raw bytes; false when it is no base64 ed25519 signature. */
static bool decode_sig(const char *sig, unsigned char out[64])
{
    char b64[128];
    size_t n = 0;
    for (const char *p = sig; *p; p++) {
        if (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t') continue;
        if (n + 1 >= sizeof b64) return false;
        b64[n++] = *p;
    }
    b64[n] = '\0';
    if (n != 88) return false;   /* 64 bytes: 86 characters + "==" */
    unsigned char raw[66];
    int w = EVP_DecodeBlock(raw, (const unsigned char *)b64, (int)n);
    if (w != 66) return false;   /* DecodeBlock counts the padding */
    memcpy(out, raw, 64);
    return true;
}

static bool verify_with(const char *keyfile, const char *text, size_t len, const unsigned char sig[64])
{
    FILE *f = fopen(keyfile, "re");
    if (!f) return false;
    EVP_PKEY *k = PEM_read_PUBKEY(f, NULL, NULL, NULL);
    fclose(f);
    if (!k) return false;
    bool ok = false;
    EVP_MD_CTX *md = EVP_MD_CTX_new();
    if (md && EVP_PKEY_id(k) == EVP_PKEY_ED25519 && EVP_DigestVerifyInit(md, NULL, NULL, NULL, k) == 1)
        ok = EVP_DigestVerify(md, sig, 64, (const unsigned char *)text, len) == 1;
    EVP_MD_CTX_free(md);
    EVP_PKEY_free(k);
    return ok;
}

/* Try every *.pem of dir (site: root's only); 1 verified (signed_by set), 0 not. */
static int try_dir(ce_ctx *ctx, const char *dir, bool site, const char *text, size_t len,
                   const unsigned char sig[64], char *signed_by, size_t n, int *keys)
{
    DIR *d = opendir(dir);
    if (!d) return 0;
    if (site) {
        char real[PATH_MAX];
        ce_quiet q;
        ce_quiet_begin(&q, true);
        int rc = realpath(dir, real) ? ce_trust_chain(ctx, real, "the site keys", "") : CE_ERR_PERM;
        char why[512];
        snprintf(why, sizeof why, "%s", ce_errmsg());
        ce_quiet_end(&q);
        if (rc) {
            ce_emit(ctx, CE_EV_WARN, NULL, "ignoring the site keys in %s: %s (it must be root's and writable by "
                    "no one else)", dir, why);
            closedir(d);
            return 0;
        }
    }
    int found = 0;
    struct dirent *e;
    while (!found && (e = readdir(d))) {
        size_t l = strlen(e->d_name);
        if (l < 5 || strcmp(e->d_name + l - 4, ".pem")) continue;
        char path[4400];
        if (snprintf(path, sizeof path, "%.4000s/%.255s", dir, e->d_name) >= (int)sizeof path) continue;
        struct stat st;
        if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode)) continue;
        const char *why = site ? ce_trust_stat_reason(&st, false) : NULL;
        if (!why && !site && (st.st_mode & 022)) why = "writable by group or others";
        if (why) {
            ce_emit(ctx, CE_EV_WARN, NULL, "ignoring the key %s: %s", path, why);
            continue;
        }
        (*keys)++;
        if (verify_with(path, text, len, sig)) {
            snprintf(signed_by, n, "%s", path);
            found = 1;
        }
    }
    closedir(d);
    return found;
}

int ce_manifest_sig_verify(ce_ctx *ctx, const char *url, const char *text, size_t len, const char *sig,
                           char *signed_by, size_t n, bool *by_project)
{
    signed_by[0] = '\0';
    *by_project = false;
    const char *optout = ce_settings_now()->unsigned_ok;
    char conf[16];
    bool unsigned_ok = optout && *optout ? !strcmp(optout, "1")
                                         : ce_config_get(ctx, "manifest_unsigned", conf, sizeof conf, NULL) &&
                                               !strcmp(conf, "true");
    if (!sig) {
        if (unsigned_ok) {
            ce_emit(ctx, CE_EV_WARN, NULL, "the manifest %s is not signed (no %s.sig); accepted because "
                    "%s", url, url, optout && *optout ? "CUDAENV_MANIFEST_UNSIGNED=1" : "the config says manifest_unsigned");
            return CE_OK;
        }
        return ce_fail(ctx, CE_ERR_INTEGRITY, "the manifest %s is not signed (no %s.sig): refused; sign it "
                       "(man cudaenv-manifest: SIGNATURES) or, for a source you trust by other means, set "
                       "CUDAENV_MANIFEST_UNSIGNED=1", url, url);
    }
    unsigned char raw[64];
    if (!decode_sig(sig, raw))
        return ce_fail(ctx, CE_ERR_INTEGRITY, "%s.sig is no ed25519 signature (expected 64 bytes in base64): "
                       "the manifest %s is refused", url, url);
    char dirs[3][4300];
    int keys = 0;
    char builtin[4200];
    ce_quiet q;
    ce_quiet_begin(&q, true);
    dirs[0][0] = '\0';
    if (ce_builtin_manifest(ctx, builtin, sizeof builtin) == CE_OK) {
        char *slash = strrchr(builtin, '/');
        if (slash) *slash = '\0';
        char keys_dir[4300], real[PATH_MAX];
        snprintf(keys_dir, sizeof keys_dir, "%s/../keys", builtin);
        snprintf(dirs[0], sizeof dirs[0], "%s", realpath(keys_dir, real) ? real : keys_dir);
    }
    ce_quiet_end(&q);
    ce_sys_path(ctx, "/etc/cudaenv/keys", dirs[1], sizeof dirs[1]);
    const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
    if (xdg && *xdg == '/') snprintf(dirs[2], sizeof dirs[2], "%s/cudaenv/keys", xdg);
    else if (home && *home) snprintf(dirs[2], sizeof dirs[2], "%s/.config/cudaenv/keys", home);
    else dirs[2][0] = '\0';
    for (int i = 0; i < 3; i++)
        if (dirs[i][0] && try_dir(ctx, dirs[i], i == 1, text, len, raw, signed_by, n, &keys)) {
            *by_project = i == 0;
            return CE_OK;
        }
    /* the config's "keys": files, under the rule of the file that names them */
    char key[4096];
    ce_conf_origin from;
    for (size_t i = 0; ce_config_item(ctx, "keys", i, key, sizeof key, &from); i++) {
        struct stat st;
        const char *why = lstat(key, &st) != 0 ? "cannot be read" : !S_ISREG(st.st_mode) ? "not a regular file"
                          : from == CE_CONF_SITE ? ce_trust_stat_reason(&st, false)
                          : (st.st_mode & 022) ? "writable by group or others" : NULL;
        if (why) {
            ce_emit(ctx, CE_EV_WARN, NULL, "ignoring the key %s (config keys): %s", key, why);
            continue;
        }
        keys++;
        if (verify_with(key, text, len, raw)) {
            snprintf(signed_by, n, "%s", key);
            return CE_OK;
        }
    }
    if (!keys)
        return ce_fail(ctx, CE_ERR_INTEGRITY, "the manifest %s is signed, but there is no trusted key to check "
                       "it with (looked in %s, %s and %s): add the publisher's public key there", url,
                       dirs[0][0] ? dirs[0] : "<datadir>/keys", dirs[1], dirs[2][0] ? dirs[2] : "~/.config/cudaenv/keys");
    return ce_fail(ctx, CE_ERR_INTEGRITY, "the signature %s.sig does not match the manifest %s under any of %d "
                   "trusted key%s: refused (tampered with, or signed by a key you do not trust); the local copy "
                   "is kept", url, url, keys, keys == 1 ? "" : "s");
}

static int load_private(ce_ctx *ctx, const char *keyfile, EVP_PKEY **out)
{
    *out = NULL;
    FILE *f = fopen(keyfile, "re");
    if (!f) return ce_fail(ctx, CE_ERR_USAGE, "cannot read the signing key %s: %s", keyfile, strerror(errno));
    EVP_PKEY *k = PEM_read_PrivateKey(f, NULL, NULL, NULL);
    fclose(f);
    if (!k || EVP_PKEY_id(k) != EVP_PKEY_ED25519) {
        EVP_PKEY_free(k);
        return ce_fail(ctx, CE_ERR_USAGE, "%s is no ed25519 private key (PEM); make one with: openssl genpkey "
                       "-algorithm ed25519 -out %s", keyfile, keyfile);
    }
    *out = k;
    return CE_OK;
}

int ce_manifest_sign_key_check(ce_ctx *ctx, const char *keyfile)
{
    EVP_PKEY *k;
    int rc = load_private(ctx, keyfile, &k);
    EVP_PKEY_free(k);
    return rc;
}

int ce_manifest_sign_file(ce_ctx *ctx, const char *keyfile, const char *path)
{
    EVP_PKEY *k;
    int rc0 = load_private(ctx, keyfile, &k);
    if (rc0) return rc0;
    char *text = NULL;
    size_t len = 0;
    int rc = ce_file_read(ctx, path, 64u << 20, &text, &len);
    unsigned char sig[64];
    size_t siglen = sizeof sig;
    EVP_MD_CTX *md = rc ? NULL : EVP_MD_CTX_new();
    if (!rc && (!md || EVP_DigestSignInit(md, NULL, NULL, NULL, k) != 1 ||
                EVP_DigestSign(md, sig, &siglen, (const unsigned char *)text, len) != 1 || siglen != 64))
        rc = ce_fail(ctx, CE_ERR_OTHER, "cannot sign %s with %s", path, keyfile);
    EVP_MD_CTX_free(md);
    EVP_PKEY_free(k);
    free(text);
    if (rc) return rc;
    char b64[96], out[4300];
    int n = EVP_EncodeBlock((unsigned char *)b64, sig, 64);
    snprintf(out, sizeof out, "%s.sig", path);
    return ce_file_write_atomic(ctx, out, b64, (size_t)n, 0644);
}
