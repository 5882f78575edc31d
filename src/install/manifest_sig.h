/* Signed manifests: a detached ed25519 signature over the manifest's exact
 * bytes, published beside it as <url>.sig (the 64-byte signature in base64,
 * one line: `openssl pkeyutl -sign -rawin -inkey key.pem -in cudaenv.json |
 * base64 -w0`).  Full binary only (libcrypto).
 *
 * Trusted public keys (PEM, `openssl pkey -pubout`), every *.pem of, in order:
 *   <datadir>/keys/                      the project's keys, installed with cudaenv
 *                                        (beside the built-in manifest)
 *   $CUDAENV_SYSROOT/etc/cudaenv/keys/   site keys: the directory, its chain and
 *                                        each file must be root's and writable by
 *                                        no one else, or they are ignored (a warning)
 *   ${XDG_CONFIG_HOME:-~/.config}/cudaenv/keys/   the user's own (the directory and
 *                                        each key not group/other-writable);
 *                                        never consulted as root
 *   the config's "keys"                  files (the site's: root's)
 * As root every key is opened under core/priv.h's rule (ce_priv_file_open:
 * the key and every directory above it root's, checked on the fd): only the
 * project's and the site's anchors, and root's config keys, verify for root.
 * A remote manifest must verify under one of them: unsigned (no .sig) or
 * badly signed is CE_ERR_INTEGRITY (exit 5) naming the URL, unless
 * CUDAENV_MANIFEST_UNSIGNED=1 opts out, which accepts an unsigned manifest
 * (a warning) but never a bad signature.  Local manifests (paths) are the
 * admin's files and need none. */
#ifndef CE_MANIFEST_SIG_H
#define CE_MANIFEST_SIG_H

#include <stdbool.h>
#include <stddef.h>

#include "core/ctx.h"

/* Sign the file at path with the ed25519 private key in keyfile (PEM) and
 * write path.sig (temp + rename): what `mirror --sign-key` does to its
 * cudaenv.json.  CE_ERR_USAGE for a key that is no ed25519 private key. */
int ce_manifest_sign_file(const char *keyfile, const char *path);
/* The same key check alone (before a mirror run changes anything). */
int ce_manifest_sign_key_check(const char *keyfile);

/* Verify text (len bytes) of the manifest at url against sig (the .sig
 * file's text; NULL when the source has none).  signed_by: the key file
 * that verified it ("" when accepted unsigned); *by_project: that key is
 * one of the project's (<datadir>/keys), i.e. this is the project's own
 * published manifest. */
int ce_manifest_sig_verify(ce_ctx *ctx, const char *url, const char *text, size_t len, const char *sig,
                           char *signed_by, size_t n, bool *by_project);

/* Verify text (len bytes, what names it) against sig (a .sig file's base64
 * text) under the one key file keyfile: CE_ERR_INTEGRITY on a mismatch or a
 * malformed signature, CE_ERR_PERM for a key others could have written. */
int ce_sig_verify_key(const char *keyfile, const char *what, const char *text, size_t len,
                      const char *sig);

#endif
