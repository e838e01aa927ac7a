//! Paused actions' states, signed. The engine's state is plain JSON holding the call's input, the
//! answers so far and the faces the engine rolled (decisions.md, "Actions at run time"); handed to
//! a client as it is, the client could edit the faces, the target, the policy or the answers. The
//! service hands out `v1.<payload>.<mac>` instead: the payload (base64url JSON) binds the engine's
//! state to the character's ID and the revision it was computed on, and the MAC is HMAC-SHA-256
//! under a key kept in the store (so every instance over one store continues any state).
//!
//! A continue is refused with `invalid-state` when the MAC does not match (tampered or not ours),
//! `foreign-state` when the state is another character's, and `stale-state` when the character
//! changed since (decisions.md, "Signed states and a continue after the character changed").

use axum::http::StatusCode;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, KeyInit, Mac};
use serde_json::{Value, json};

use crate::error::ApiError;

type HmacSha256 = Hmac<sha2::Sha256>;

const PREFIX: &str = "v1.";

/// Signs and checks states with one key.
#[derive(Clone)]
pub struct Signer {
    key: Vec<u8>,
}

impl Signer {
    pub fn new(key: &[u8]) -> Signer {
        Signer { key: key.to_vec() }
    }

    fn mac(&self, signed: &str) -> HmacSha256 {
        let mut mac = HmacSha256::new_from_slice(&self.key).expect("HMAC takes any key");
        mac.update(signed.as_bytes());
        mac
    }

    /// The state handed out for the engine's `state` of character `id` at `revision`.
    pub fn sign(&self, id: &str, revision: u64, state: &Value) -> String {
        let payload = json!({ "character": id, "revision": revision, "state": state });
        let signed = format!("{PREFIX}{}", URL_SAFE_NO_PAD.encode(payload.to_string()));
        let tag = self.mac(&signed).finalize().into_bytes();
        format!("{signed}.{}", URL_SAFE_NO_PAD.encode(tag))
    }

    /// The engine's state inside `given`, checked: signed by this key, for character `id`, made
    /// at `revision` (the character's current one).
    pub fn open(&self, given: &Value, id: &str, revision: u64) -> Result<Value, ApiError> {
        let invalid = |why: &str| {
            ApiError::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                "invalid-state",
                format!(
                    "the `state` {why}: continue only a state this service handed out, as it was"
                ),
                "/state",
            )
        };
        let Some(text) = given.as_str() else {
            return Err(invalid("is not the service's signed state (a string)"));
        };
        let Some((signed, tag)) = text.rsplit_once('.') else {
            return Err(invalid("is not signed"));
        };
        let tag = URL_SAFE_NO_PAD
            .decode(tag)
            .map_err(|_| invalid("has a malformed signature"))?;
        if !signed.starts_with(PREFIX) || self.mac(signed).verify_slice(&tag).is_err() {
            return Err(invalid("does not match its signature"));
        }
        let payload: Value = URL_SAFE_NO_PAD
            .decode(&signed[PREFIX.len()..])
            .ok()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .ok_or_else(|| invalid("does not read"))?;
        let character = payload["character"].as_str().unwrap_or_default();
        if character != id {
            return Err(ApiError::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                "foreign-state",
                format!("the `state` is an action of `{character}`, not of `{id}`"),
                "/state",
            )
            .with("character", character));
        }
        let made = payload["revision"].as_u64().unwrap_or_default();
        if made != revision {
            return Err(ApiError::new(
                StatusCode::CONFLICT,
                "stale-state",
                format!(
                    "`{id}` changed since the action paused (revision {made}, now {revision}): \
                     start the action again"
                ),
                "/state",
            )
            .with("revision", revision)
            .with("given", made));
        }
        Ok(payload["state"].clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_state_opens_only_as_it_was_signed() {
        let signer = Signer::new(b"key");
        let state = json!({ "rolled": [3] });
        let signed = signer.sign("pc", 2, &state);
        assert_eq!(signer.open(&json!(signed), "pc", 2).unwrap(), state);
        let code = |r: Result<Value, ApiError>| r.unwrap_err().errors[0]["code"].clone();
        assert_eq!(code(signer.open(&json!(signed), "npc", 2)), "foreign-state");
        assert_eq!(code(signer.open(&json!(signed), "pc", 3)), "stale-state");
        assert_eq!(
            code(Signer::new(b"other").open(&json!(signed), "pc", 2)),
            "invalid-state"
        );
        let forged = signer.sign("pc", 2, &json!({ "rolled": [20] }));
        let (payload, _) = forged.rsplit_once('.').unwrap();
        let (_, tag) = signed.rsplit_once('.').unwrap();
        assert_eq!(
            code(signer.open(&json!(format!("{payload}.{tag}")), "pc", 2)),
            "invalid-state"
        );
        assert_eq!(code(signer.open(&state, "pc", 2)), "invalid-state");
    }
}
