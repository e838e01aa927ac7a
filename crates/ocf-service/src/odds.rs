//! `POST /api/characters/{id}/odds` `{ action, params?, situational?, participants?, answers?,
//! trial? }`: the odds of an action on the stored character (issue 45), before any die is rolled:
//! `{ id, revision, odds }`, `odds` as `ocf odds --json` gives it (`{ results, participants,
//! changes, outcomes }`). Nothing is stored.
//!
//! - A handoff (a target's own saving throw) is worked out on the participant's stored character,
//!   as `ocf odds --participant` does, when the caller may read it and it computes on the same
//!   ruleset; otherwise it is refused (`invalid-participants`).
//! - `trial` is a batch of changes (as `POST …/changes` takes it) applied first to a copy of the
//!   character: the odds as they would be after them (a choice's option before it is picked). A
//!   batch the engine refuses is refused with its code, and the odds of nothing are given.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{Extension, Path, State};
use axum::http::StatusCode;
use ocf_actions::odds::SessionOdds;
use ocf_actions::odds::handoffs::Characters;
use ocf_engine::CharacterId;
use serde_json::{Value, json};

use crate::accounts::Who;
use crate::api::{Answer, blocking};
use crate::app::{App, Need};
use crate::error::ApiError;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn routes() -> OpenApiRouter<Arc<App>> {
    OpenApiRouter::new().routes(routes!(odds))
}

/// The odds of an action before any die is rolled (with `trial`, after a batch of changes made
/// on a copy); nothing is stored.
#[utoipa::path(
    post,
    path = "/api/characters/{id}/odds",
    tag = "actions",
    params(("id" = String, Path, description = "The character's ID")),
    request_body = crate::openapi::StartAction,
    responses(
        (status = 200, description = "The odds", body = crate::openapi::Odds),
        crate::openapi::Reads,
    ),
)]
#[tracing::instrument(name = "serve.odds", level = "info", skip_all, fields(character = %id))]
async fn odds(
    State(app): State<Arc<App>>,
    Extension(who): Extension<Who>,
    Path(id): Path<String>,
    body: Bytes,
) -> Answer {
    let mut body: Value = serde_json::from_slice(&body)
        .map_err(|e| ApiError::bad_request("invalid-request", e.to_string(), ""))?;
    let trial = match &mut body {
        Value::Object(map) => map.remove("trial"),
        _ => None,
    };
    let input: ocf_actions::StartInput = serde_json::from_value(body)
        .map_err(|e| ApiError::bad_request("invalid-request", e.to_string(), ""))?;
    let trial = match trial {
        None | Some(Value::Null) => Vec::new(),
        Some(batch) => ocf_engine::changes::read_batch(&batch).map_err(|e| {
            ApiError::many(
                StatusCode::BAD_REQUEST,
                vec![trial_error(serde_json::to_value(e).unwrap_or_default())],
            )
        })?,
    };
    // The odds read the character's sheet and roll nothing: whoever may read it may ask them.
    blocking(app, move |app| {
        app.authorize(&who, &id, Need::Read)?;
        // The participants whose stored characters a handoff may run on: those the caller may
        // read, on the same ruleset.
        let ruleset = app.ruleset_of(&id)?;
        let mut others = Vec::new();
        for view in input
            .participants
            .values()
            .flat_map(|v| v.as_array().into_iter().flatten())
        {
            let Some(other) = view["id"].as_str() else {
                continue;
            };
            if other == id || others.iter().any(|(o, _)| o == other) {
                continue;
            }
            if app.authorize(&who, other, Need::Read).is_err() {
                continue;
            }
            let same = app
                .ruleset_of(other)
                .is_ok_and(|r| Arc::ptr_eq(&r, &ruleset));
            let file = app.file(other).ok().and_then(|f| {
                serde_json::from_value::<ocf_model::Character>(f["character"].clone()).ok()
            });
            if let (true, Some(file)) = (same, file) {
                others.push((other.to_owned(), file));
            }
        }
        app.odds(&id, &input, &trial, &others)
    })
    .await
}

/// A refusal of the trial batch, its path under `/trial` (the engine's `/changes/0/…`).
fn trial_error(mut json: Value) -> Value {
    if let Some(Value::String(path)) = json.get_mut("path") {
        *path = format!("/trial{}", path.strip_prefix("/changes").unwrap_or(path));
    }
    with_path(json, "/trial")
}

fn with_path(mut json: Value, path: &str) -> Value {
    if let Value::Object(map) = &mut json {
        map.entry("path").or_insert_with(|| json!(path));
    }
    json
}

impl App {
    /// The odds of `input` on the open, current character `id`, after the `trial` changes; a
    /// handoff runs on the character of `others` it names.
    pub fn odds(
        &self,
        id: &str,
        input: &ocf_actions::StartInput,
        trial: &[ocf_model::Change],
        others: &[(String, ocf_model::Character)],
    ) -> Result<Value, ApiError> {
        self.read_with(id, |session, cid, revision| {
            // Each participant and the trial copy are opened beside the character in its own
            // session, and closed again whatever the answer.
            let mut opened: Vec<CharacterId> = Vec::new();
            let mut list: Vec<(String, CharacterId)> = vec![(id.to_owned(), cid)];
            for (other, file) in others {
                let other_id = session.open(file, &file.competing);
                opened.push(other_id);
                list.push((other.clone(), other_id));
            }
            let mut actor = cid;
            let mut refused = None;
            if !trial.is_empty() {
                let copy = match session.file(cid) {
                    Ok(file) => file.clone(),
                    Err(e) => return Err(ApiError::internal(e.to_string())),
                };
                let copy_id = session.open(&copy, &copy.competing);
                opened.push(copy_id);
                let options = ocf_engine::ApplyOptions {
                    links: Default::default(),
                    strict: false,
                    dice: None,
                };
                match session.apply(copy_id, trial, options) {
                    Ok(_) => actor = copy_id,
                    Err(e) => refused = Some(serde_json::to_value(e).unwrap_or_default()),
                }
            }
            let odds = match refused {
                Some(error) => Err(ApiError::many(
                    StatusCode::UNPROCESSABLE_ENTITY,
                    vec![trial_error(error)],
                )),
                None => {
                    let shared: &ocf_engine::Session = session;
                    let mut handoffs = Characters::new(
                        list.iter()
                            .map(|(who, c)| (who.clone(), shared, *c))
                            .collect(),
                    );
                    shared
                        .odds(actor, input, &mut handoffs)
                        .map_err(|e| {
                            ApiError::many(
                                StatusCode::UNPROCESSABLE_ENTITY,
                                vec![with_path(e.to_json(), "")],
                            )
                        })
                        .map(|odds| odds.to_json())
                }
            };
            for other in opened {
                session.close(other);
            }
            // The runs' proposed sheets are given back, as after an action call.
            let _ = session.reclaim(cid);
            Ok(json!({ "id": id, "revision": revision, "odds": odds? }))
        })
    }
}
