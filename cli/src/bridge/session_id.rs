//! A session's id, as the bridge mints it: 128 random bits from the system's
//! generator (`getrandom(2)`), written as 32 lowercase hexadecimal digits, so
//! that no client can guess another's session. The log shows its first 8
//! digits only: enough to follow a session, too few to use it.

/// A new session id.
pub(crate) fn mint() -> std::io::Result<String> {
    let mut bytes = [0u8; 16];
    let mut filled = 0;
    while filled < bytes.len() {
        let rest = &mut bytes[filled..];
        // SAFETY: getrandom(2) writes at most `rest.len()` bytes into `rest`,
        // which is valid for writes of that length.
        #[allow(unsafe_code)]
        let written = unsafe { libc::getrandom(rest.as_mut_ptr().cast(), rest.len(), 0) };
        match usize::try_from(written) {
            Ok(written) => filled += written,
            Err(_) => {
                let error = std::io::Error::last_os_error();
                if error.kind() != std::io::ErrorKind::Interrupted {
                    return Err(error);
                }
            }
        }
    }
    Ok(bytes.iter().map(|byte| format!("{byte:02x}")).collect())
}

/// How many of an id's digits the log shows.
const SHOWN_DIGITS: usize = 8;

/// What the log shows of the session id `id`: its first 8 digits.
pub(crate) fn prefix(id: &str) -> &str {
    id.get(..SHOWN_DIGITS).unwrap_or(id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_32_hex_digits_and_differ() {
        let ids: std::collections::HashSet<String> = (0..1000).map(|_| mint().unwrap()).collect();
        assert_eq!(ids.len(), 1000);
        assert!(ids.iter().all(|id| {
            id.len() == 32
                && id
                    .bytes()
                    .all(|byte| byte.is_ascii_hexdigit() && !byte.is_ascii_uppercase())
        }));
    }
}
