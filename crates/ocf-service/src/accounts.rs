//! Accounts and roles, as a virtual tabletop's users expect them (Foundry VTT's gamemaster, player
//! and observer, with ownership per character):
//!
//! - the **gamemaster** does everything: every character, every route, who owns what;
//! - a **player** reads the characters they own and those the gamemaster shares, and edits and
//!   acts only for the ones they own; a character a player creates is theirs;
//! - an **observer** reads the characters the gamemaster shares, and writes nothing.
//!
//! Passwords are kept as Argon2id hashes (PHC strings); tokens and session cookies as the SHA-256
//! of a 256-bit random secret, so the store never holds what logs in. Users, roles and tokens are
//! managed from the CLI (`ocf users …`), in the store the service uses.

use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use sha2::Digest;

use crate::store::{Account, Credential, Ownership, Store, StoreError, now};

/// A user's role.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Gamemaster,
    Player,
    Observer,
}

impl Role {
    pub const NAMES: [&'static str; 3] = ["gamemaster", "player", "observer"];

    pub fn parse(name: &str) -> Option<Role> {
        match name {
            "gamemaster" => Some(Role::Gamemaster),
            "player" => Some(Role::Player),
            "observer" => Some(Role::Observer),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Role::Gamemaster => "gamemaster",
            Role::Player => "player",
            Role::Observer => "observer",
        }
    }
}

/// Who makes a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Who {
    /// The user's name; `None` for the open service (no account configured, loopback only),
    /// where the one person at the keyboard is the gamemaster.
    pub name: Option<String>,
    pub role: Role,
}

impl Who {
    pub fn open() -> Who {
        Who {
            name: None,
            role: Role::Gamemaster,
        }
    }

    pub fn is_gamemaster(&self) -> bool {
        self.role == Role::Gamemaster
    }

    fn owns(&self, ownership: &Ownership) -> bool {
        self.name.is_some() && ownership.owner == self.name
    }

    /// Reads the character (its file, sheet, fields, options, events).
    pub fn reads(&self, ownership: &Ownership) -> bool {
        self.is_gamemaster() || ownership.shared || self.owns(ownership)
    }

    /// Edits it and acts for it.
    pub fn writes(&self, ownership: &Ownership) -> bool {
        self.is_gamemaster() || (self.role == Role::Player && self.owns(ownership))
    }

    /// Creates characters (a player's are their own).
    pub fn creates(&self) -> bool {
        self.role != Role::Observer
    }
}

/// How long a browser session lasts: a week.
pub const SESSION_SECONDS: i64 = 7 * 24 * 3600;

/// The Argon2id hash of `password` with a fresh salt, as a PHC string (Argon2's default cost:
/// 19 MiB, 2 passes, OWASP's recommendation).
pub fn hash_password(password: &str) -> Result<String, String> {
    let mut salt = [0u8; 16];
    getrandom::fill(&mut salt).map_err(|e| e.to_string())?;
    let salt = SaltString::encode_b64(&salt).map_err(|e| e.to_string())?;
    argon2::Argon2::default()
        .hash_password(password.as_bytes(), &salt)
        .map(|hash| hash.to_string())
        .map_err(|e| e.to_string())
}

/// Whether `password` is the one `hash` was made from.
pub fn verify_password(password: &str, hash: &str) -> bool {
    PasswordHash::new(hash).is_ok_and(|parsed| {
        argon2::Argon2::default()
            .verify_password(password.as_bytes(), &parsed)
            .is_ok()
    })
}

/// A fresh secret: 32 random bytes, base64url, with `prefix` (`ocf_` for tokens).
pub fn fresh_secret(prefix: &str) -> Result<String, String> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| e.to_string())?;
    Ok(format!("{prefix}{}", URL_SAFE_NO_PAD.encode(bytes)))
}

/// What the store keeps of a secret: its SHA-256, hex.
pub fn digest(secret: &str) -> String {
    sha2::Sha256::digest(secret.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The user a secret (a token or a session cookie) logs in as, with its role.
pub fn who_by_secret(
    store: &dyn Store,
    kind: &str,
    secret: &str,
) -> Result<Option<Who>, StoreError> {
    let Some(credential) = store.credential(&digest(secret), now())? else {
        return Ok(None);
    };
    if credential.kind != kind {
        return Ok(None);
    }
    Ok(store.account(&credential.user)?.and_then(|account| {
        Role::parse(&account.role).map(|role| Who {
            name: Some(account.name),
            role,
        })
    }))
}

/// Checks a user's password: the user, or `None` (an unknown user costs a hash too, so timing
/// does not tell which names exist).
pub fn log_in(store: &dyn Store, name: &str, password: &str) -> Result<Option<Who>, StoreError> {
    let account = store.account(name)?;
    let hash = account
        .as_ref()
        .map(|a| a.hash.clone())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| {
            DUMMY
                .get_or_init(|| hash_password("-").unwrap_or_default())
                .clone()
        });
    let verified = verify_password(password, &hash);
    Ok(account.filter(|_| verified).and_then(|account| {
        Role::parse(&account.role).map(|role| Who {
            name: Some(account.name),
            role,
        })
    }))
}

static DUMMY: std::sync::OnceLock<String> = std::sync::OnceLock::new();

/// Starts a browser session for `name`: the cookie's secret.
pub fn start_session(store: &dyn Store, name: &str) -> Result<String, StoreError> {
    let secret = fresh_secret("").map_err(StoreError::Backend)?;
    store.add_credential(&Credential {
        digest: digest(&secret),
        user: name.to_owned(),
        kind: "session".into(),
        label: String::new(),
        expires: Some(now() + SESSION_SECONDS),
    })?;
    Ok(secret)
}

/// Issues a bearer token for `name`: the token, shown once (the store keeps its digest), and the
/// label that names it in `ocf users tokens` and revocations.
pub fn issue_token(
    store: &dyn Store,
    name: &str,
    expires: Option<i64>,
) -> Result<(String, String), StoreError> {
    let secret = fresh_secret("ocf_").map_err(StoreError::Backend)?;
    let label = secret[..12].to_owned();
    store.add_credential(&Credential {
        digest: digest(&secret),
        user: name.to_owned(),
        kind: "token".into(),
        label: label.clone(),
        expires,
    })?;
    Ok((secret, label))
}

/// Adds a user or changes its role (and, given, its password).
pub fn put_user(
    store: &dyn Store,
    name: &str,
    role: Role,
    password: Option<&str>,
) -> Result<(), String> {
    if name.is_empty() || name.chars().count() > 100 || name.chars().any(|c| c.is_control()) {
        return Err("a user name is 1 to 100 characters, with no control character".into());
    }
    let hash = match password {
        Some(password) => hash_password(password)?,
        None => store
            .account(name)
            .map_err(|e| e.to_string())?
            .map(|a| a.hash)
            .unwrap_or_default(),
    };
    store
        .put_account(&Account {
            name: name.to_owned(),
            role: role.name().to_owned(),
            hash,
        })
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_password_verifies_against_its_hash_only() {
        let hash = hash_password("correct horse").unwrap();
        assert!(hash.starts_with("$argon2id$"), "{hash}");
        assert!(verify_password("correct horse", &hash));
        assert!(!verify_password("correct horsf", &hash));
        assert!(!verify_password("correct horse", "not a hash"));
    }
}
