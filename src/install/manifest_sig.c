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
#include "core/path.h"

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

/* The public key read from fd (closed here). */
static bool verify_with(int fd, const char *text, size_t len, const unsigned char sig[64])
{
    FILE *f = fdopen(fd, "re");
    if (!f) { close(fd); return false; }
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

/* ---- where keys come from (the trust anchors) ----
 * As root only the project's keys and the site's, each key and directory
 * under the rule of core/priv.h (root's, in directories only root can
 * change, checked on the opened fd); a user's (their key directory, a key
 * a config names that is not root's) never verifies for root.  As a user
 * their own directory as well, but no key or key directory that others
 * can write. */
enum { KEYS_PROJECT, KEYS_SITE, KEYS_USER, KEYS_N };

/* The key directories of level i into out ("" when there is none). */
static void key_dir(ce_ctx *ctx, int i, char *out, size_t n)
{
    out[0] = '\0';
    if (i == KEYS_PROJECT) {
        char builtin[4200], keys_dir[4300], real[PATH_MAX];
        ce_quiet q;
        ce_quiet_begin(&q, true);
        if (ce_builtin_manifest(ctx, builtin, sizeof builtin) == CE_OK) {
            char *slash = strrchr(builtin, '/');
            if (slash) *slash = '\0';
            snprintf(keys_dir, sizeof keys_dir, "%s/../keys", builtin);
            snprintf(out, n, "%s", realpath(keys_dir, real) ? real : keys_dir);
        }
        ce_quiet_end(&q);
    } else if (i == KEYS_SITE) {
        ce_sys_path(ctx, "/etc/cudaenv/keys", out, n);
    } else {
        const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
        if (xdg && *xdg == '/') snprintf(out, n, "%s/cudaenv/keys", xdg);
        else if (home && *home == '/') snprintf(out, n, "%s/.config/cudaenv/keys", home);
    }
}

/* Open the key at path under the rule: as root (or rooted: named by the
 * site's config) root's, with its chain; as a user writable by no one
 * else.  The fd, or -1 with why. */
static int key_open(const char *path, bool rooted, char *why, size_t whysz)
{
    char real[PATH_MAX];
    int fd = ce_priv_file_open(path, true, real, sizeof real, why, whysz);
    if (fd < 0 || ce_trust_privileged()) return fd;
    struct stat st;
    const char *r = fstat(fd, &st) != 0 ? "unreadable" : rooted ? ce_trust_stat_reason(&st, false)
                    : (st.st_mode & 022) ? "writable by group or others" : NULL;
    if (!r) return fd;
    snprintf(why, whysz, "%s is %s", real, r);
    close(fd);
    errno = EPERM;
    return -1;
}

/* Try every *.pem of the key directory of level i; 1 verified (signed_by
 * set), 0 not.  The directory is held by fd once it passed. */
static int try_dir(ce_ctx *ctx, int i, const char *dir, const char *text, size_t len, const unsigned char sig[64],
                   char *signed_by, size_t n, int *keys)
{
    char why[PATH_MAX + 256];
    ce_priv_tree t;
    if (ce_priv_tree_open(&t, dir, why, sizeof why)) {
        if (errno != ENOENT && errno != ENOTDIR)
            ce_emit(ctx, CE_EV_WARN, NULL, "ignoring the %s keys in %s: %s (it must be root's and writable by "
                    "no one else)", i == KEYS_PROJECT ? "project's" : i == KEYS_SITE ? "site" : "user's", dir, why);
        return 0;
    }
    /* the site's, for a user too: root's with its chain (as root
     * ce_priv_tree_open checked every level's) */
    char cur[PATH_MAX];
    const char *r = NULL;
    if (i == KEYS_SITE && !ce_trust_privileged() && ce_priv_chain_walk(t.path, cur, NULL, &r)) {
        ce_emit(ctx, CE_EV_WARN, NULL, "ignoring the site keys in %s: %s is %s (it must be root's and writable by "
                "no one else)", dir, cur, r ? r : "unreadable");
        ce_priv_tree_close(&t);
        return 0;
    }
    struct stat st;
    if (!ce_trust_privileged() && fstat(t.fd, &st) == 0 && (st.st_mode & 022)) {
        ce_emit(ctx, CE_EV_WARN, NULL, "ignoring the keys in %s: the directory is writable by group or others "
                "(anyone could add a key): chmod go-w %s", dir, dir);
        ce_priv_tree_close(&t);
        return 0;
    }
    int dfd = dup(t.fd);
    DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
    if (!d) {
        if (dfd >= 0) close(dfd);
        ce_priv_tree_close(&t);
        return 0;
    }
    int found = 0;
    struct dirent *e;
    while (!found && (e = readdir(d))) {
        size_t l = strlen(e->d_name);
        if (l < 5 || strcmp(e->d_name + l - 4, ".pem")) continue;
        char path[PATH_MAX + 300], shown[4300 + 300];
        if (ce_path_join(path, sizeof path, t.path, e->d_name) != CE_OK) continue;
        snprintf(shown, sizeof shown, "%.4000s/%.255s", dir, e->d_name);
        int fd = key_open(path, i != KEYS_USER, why, sizeof why);
        if (fd < 0) {
            if (errno != EINVAL) ce_emit(ctx, CE_EV_WARN, NULL, "ignoring the key %s: %s", shown, why);
            continue;
        }
        (*keys)++;
        if (verify_with(fd, text, len, sig)) {
            snprintf(signed_by, n, "%s", shown);
            found = 1;
        }
    }
    closedir(d);
    ce_priv_tree_close(&t);
    return found;
}

/* The keys of the config's "keys" (files): 1 verified, 0 not. */
static int try_config_keys(ce_ctx *ctx, const char *text, size_t len, const unsigned char sig[64], char *signed_by,
                           size_t n, int *keys)
{
    char key[4096], why[PATH_MAX + 256];
    ce_conf_origin from;
    for (size_t i = 0; ce_config_item(ctx, "keys", i, key, sizeof key, &from); i++) {
        int fd = key_open(key, from == CE_CONF_SITE, why, sizeof why);
        if (fd < 0) {
            ce_emit(ctx, CE_EV_WARN, NULL, "ignoring the key %s (config keys): %s", key, why);
            continue;
        }
        (*keys)++;
        if (verify_with(fd, text, len, sig)) {
            snprintf(signed_by, n, "%s", key);
            return 1;
        }
    }
    return 0;
}

/* Where keys were looked for, for the refusal. */
static void key_places(char dirs[KEYS_N][4300], char *out, size_t n)
{
    if (ce_trust_privileged())
        snprintf(out, n, "%s and %s; as root a user's keys (~/.config/cudaenv/keys, XDG_CONFIG_HOME) are never "
                 "trusted: put the key in %s", dirs[KEYS_PROJECT][0] ? dirs[KEYS_PROJECT] : "<datadir>/keys",
                 dirs[KEYS_SITE], dirs[KEYS_SITE]);
    else
        snprintf(out, n, "%s, %s and %s", dirs[KEYS_PROJECT][0] ? dirs[KEYS_PROJECT] : "<datadir>/keys",
                 dirs[KEYS_SITE], dirs[KEYS_USER][0] ? dirs[KEYS_USER] : "~/.config/cudaenv/keys");
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
        return ce_fail(CE_ERR_INTEGRITY, "the manifest %s is not signed (no %s.sig): refused; sign it "
                       "(man cudaenv-manifest: SIGNATURES) or, for a source you trust by other means, set "
                       "CUDAENV_MANIFEST_UNSIGNED=1", url, url);
    }
    unsigned char raw[64];
    if (!decode_sig(sig, raw))
        return ce_fail(CE_ERR_INTEGRITY, "%s.sig is no ed25519 signature (expected 64 bytes in base64): "
                       "the manifest %s is refused", url, url);
    char dirs[KEYS_N][4300], places[3 * 4300 + 256];
    int keys = 0;
    for (int i = 0; i < KEYS_N; i++) {
        key_dir(ctx, i, dirs[i], sizeof dirs[i]);
        if (i == KEYS_USER && ce_trust_privileged()) continue;   /* never root's anchor */
        if (dirs[i][0] && try_dir(ctx, i, dirs[i], text, len, raw, signed_by, n, &keys)) {
            *by_project = i == KEYS_PROJECT;
            return CE_OK;
        }
    }
    if (try_config_keys(ctx, text, len, raw, signed_by, n, &keys)) return CE_OK;
    key_places(dirs, places, sizeof places);
    if (!keys)
        return ce_fail(CE_ERR_INTEGRITY, "the manifest %s is signed, but there is no trusted key to check "
                       "it with (looked in %s): add the publisher's public key there", url, places);
    return ce_fail(CE_ERR_INTEGRITY, "the signature %s.sig does not match the manifest %s under any of %d "
                   "trusted key%s: refused (tampered with, or signed by a key you do not trust); the local copy "
                   "is kept%s%s%s", url, url, keys, keys == 1 ? "" : "s", ce_trust_privileged() ? " (looked in " : "",
                   ce_trust_privileged() ? places : "", ce_trust_privileged() ? ")" : "");
}

/* One signature against one key file (a release's SHA256SUMS against the
 * key install.sh verified it with): the key under the same rule as the
 * site's keys (as root: root's, in root's directories; else not writable by
 * others), sig the base64 text of a .sig file. */
int ce_sig_verify_key(const char *keyfile, const char *what, const char *text, size_t len,
                      const char *sig)
{
    unsigned char raw[64];
    if (!sig || !decode_sig(sig, raw))
        return ce_fail(CE_ERR_INTEGRITY, "%s.sig is no ed25519 signature (expected 64 bytes in base64)", what);
    char why[1024] = "";
    int fd = key_open(keyfile, ce_trust_privileged(), why, sizeof why);
    if (fd < 0)
        return ce_fail(CE_ERR_PERM, "the key %s cannot be trusted: %s", keyfile, why[0] ? why : strerror(errno));
    if (!verify_with(fd, text, len, raw))
        return ce_fail(CE_ERR_INTEGRITY, "the signature of %s does not match the key %s: refused (a tampered "
                       "or foreign file)", what, keyfile);
    return CE_OK;
}

static int load_private(const char *keyfile, EVP_PKEY **out)
{
    *out = NULL;
    FILE *f = fopen(keyfile, "re");
    if (!f) return ce_fail(CE_ERR_USAGE, "cannot read the signing key %s: %s", keyfile, strerror(errno));
    EVP_PKEY *k = PEM_read_PrivateKey(f, NULL, NULL, NULL);
    fclose(f);
    if (!k || EVP_PKEY_id(k) != EVP_PKEY_ED25519) {
        EVP_PKEY_free(k);
        return ce_fail(CE_ERR_USAGE, "%s is no ed25519 private key (PEM); make one with: openssl genpkey "
                       "-algorithm ed25519 -out %s", keyfile, keyfile);
    }
    *out = k;
    return CE_OK;
}

int ce_manifest_sign_key_check(const char *keyfile)
{
    EVP_PKEY *k;
    int rc = load_private(keyfile, &k);
    EVP_PKEY_free(k);
    return rc;
}

int ce_manifest_sign_file(const char *keyfile, const char *path)
{
    EVP_PKEY *k;
    int rc0 = load_private(keyfile, &k);
    if (rc0) return rc0;
    char *text = NULL;
    size_t len = 0;
    int rc = ce_file_read(path, 64u << 20, &text, &len);
    unsigned char sig[64];
    size_t siglen = sizeof sig;
    EVP_MD_CTX *md = rc ? NULL : EVP_MD_CTX_new();
    if (!rc && (!md || EVP_DigestSignInit(md, NULL, NULL, NULL, k) != 1 ||
                EVP_DigestSign(md, sig, &siglen, (const unsigned char *)text, len) != 1 || siglen != 64))
        rc = ce_fail(CE_ERR_OTHER, "cannot sign %s with %s", path, keyfile);
    EVP_MD_CTX_free(md);
    EVP_PKEY_free(k);
    free(text);
    if (rc) return rc;
    char b64[96], out[4300];
    int n = EVP_EncodeBlock((unsigned char *)b64, sig, 64);
    snprintf(out, sizeof out, "%s.sig", path);
    return ce_file_write_atomic(out, b64, (size_t)n, 0644);
}
