//! The shared key and the HMAC-SHA256 tags of chain URLs (RFC 2104 HMAC over SHA-256, FIPS 180-4).
//!
//! The key comes from a file only (never a flag, an environment variable or a log line): a flag
//! would show in `ps` and shell history. Its `Debug` output is redacted so a stray `{:?}` cannot
//! leak it.

use hmac::{Hmac, Mac};
use sha2::Sha256;
use std::fmt;
use std::path::Path;

type HmacSha256 = Hmac<Sha256>;

/// Fewer bytes than this and the key is refused: 16 bytes (128 bits) is the floor NIST SP 800-107
/// sets for HMAC keys to give 128-bit security; `fatpipe-depot keygen` writes 32.
pub const MIN_KEY_BYTES: usize = 16;

/// Length in bytes of a tag (the full HMAC-SHA256 output; no truncation).
pub const TAG_BYTES: usize = 32;

/// The secret shared by the origin and every depot of a chain.
#[derive(Clone)]
pub struct Key(Vec<u8>);

impl fmt::Debug for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Key(<{} bytes, redacted>)", self.0.len())
    }
}

impl Key {
    /// The key is the file's bytes with trailing whitespace (a final newline) removed.
    pub fn from_bytes(bytes: &[u8]) -> Result<Key, String> {
        let end = bytes
            .iter()
            .rposition(|b| !b.is_ascii_whitespace())
            .map_or(0, |i| i + 1);
        let k = &bytes[..end];
        if k.len() < MIN_KEY_BYTES {
            return Err(format!(
                "key is {} bytes; at least {MIN_KEY_BYTES} are needed (make one with `fatpipe-depot keygen FILE`)",
                k.len()
            ));
        }
        Ok(Key(k.to_vec()))
    }

    /// Reads the key file; `what` names the setting in errors (e.g. `depot.key_file`).
    pub fn load(path: &Path, what: &str) -> Result<Key, String> {
        let bytes = std::fs::read(path)
            .map_err(|e| format!("{what}: cannot read {}: {e}", path.display()))?;
        Key::from_bytes(&bytes).map_err(|e| format!("{what} ({}): {e}", path.display()))
    }

    /// True when the key file can be read by group or others (worth a warning, not an error:
    /// test keys in a temporary directory are fine).
    pub fn readable_by_others(path: &Path) -> bool {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(path)
            .map(|m| m.permissions().mode() & 0o044 != 0)
            .unwrap_or(false)
    }

    /// The tag of `message`.
    pub fn tag(&self, message: &[u8]) -> [u8; TAG_BYTES] {
        let mut mac = HmacSha256::new_from_slice(&self.0).expect("HMAC takes keys of any length");
        mac.update(message);
        mac.finalize().into_bytes().into()
    }

    /// Constant-time check of `tag` against the tag of `message` (hmac's `verify_slice`).
    pub fn verify(&self, message: &[u8], tag: &[u8]) -> bool {
        let mut mac = HmacSha256::new_from_slice(&self.0).expect("HMAC takes keys of any length");
        mac.update(message);
        mac.verify_slice(tag).is_ok()
    }
}

/// 32 random bytes from the kernel, hex-encoded (64 characters, so the file is printable).
pub fn generate_key_hex() -> Result<String, String> {
    use std::io::Read;
    let mut buf = [0u8; 32];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut buf))
        .map_err(|e| format!("/dev/urandom: {e}"))?;
    Ok(buf.iter().map(|b| format!("{b:02x}")).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc4231_test_case_2() {
        // RFC 4231 §4.3: key "Jefe", data "what do ya want for nothing?". "Jefe" is shorter than
        // our floor, so build the key directly to check the primitive itself.
        let k = Key(b"Jefe".to_vec());
        let tag = k.tag(b"what do ya want for nothing?");
        let hex: String = tag.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(
            hex,
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }

    #[test]
    fn short_keys_are_refused_and_newline_trimmed() {
        assert!(Key::from_bytes(b"0123456789abcde\n").is_err());
        let k = Key::from_bytes(b"0123456789abcdef\n").unwrap();
        assert_eq!(k.0.len(), 16);
        assert!(format!("{k:?}").contains("redacted"));
        assert!(!format!("{k:?}").contains("0123"));
    }

    #[test]
    fn verify_rejects_other_messages_and_tags() {
        let k = Key::from_bytes(&[7u8; 32]).unwrap();
        let t = k.tag(b"abc");
        assert!(k.verify(b"abc", &t));
        assert!(!k.verify(b"abd", &t));
        let mut bad = t;
        bad[31] ^= 1;
        assert!(!k.verify(b"abc", &bad));
        assert!(!k.verify(b"abc", &t[..31]));
        let other = Key::from_bytes(&[8u8; 32]).unwrap();
        assert!(!other.verify(b"abc", &t));
    }

    #[test]
    fn generated_keys_are_valid_and_differ() {
        let a = generate_key_hex().unwrap();
        let b = generate_key_hex().unwrap();
        assert_eq!(a.len(), 64);
        assert_ne!(a, b);
        Key::from_bytes(a.as_bytes()).unwrap();
    }
}
