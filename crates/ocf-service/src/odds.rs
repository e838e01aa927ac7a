//! `POST /api/characters/{id}/odds` `{ action, params?, situational?, participants?, answers? }`:
//! the odds of an action on the stored character (issue 45), before any die is rolled:
//! `{ id, revision, odds }`, `odds` as `ocf odds --json` gives it (`{ results, participants,
//! changes, outcomes }`). Nothing is stored. A handoff is refused (`invalid-participants`): the
//! service answers for one character per call; an app works the participant's run out on its own.

use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Extension, Path, State};
use axum::http::StatusCode;
use axum::routing::post;
use ocf_actions::odds::{NoHandoffs, SessionOdds};
use serde_json::{Value, json};

use crate::accounts::Who;
use crate::api::{Answer, blocking};
use crate::app::{App, Need};
use crate::error::ApiError;

pub fn routes() -> Router<Arc<App>> {
    Router::new().route("/api/characters/{id}/odds", post(odds))
}

#[tracing::instrument(name = "serve.odds", level = "info", skip_all, fields(character = %id))]
async fn odds(
    State(app): State<Arc<App>>,
    Extension(who): Extension<Who>,
    Path(id): Path<String>,
    body: Bytes,
) -> Answer {
    let input: ocf_actions::StartInput = serde_json::from_slice(&body)
        .map_err(|e| ApiError::bad_request("invalid-request", e.to_string(), ""))?;
    // The odds read the character's sheet and roll nothing: whoever may read it may ask them.
    blocking(app, move |app| {
        app.authorize(&who, &id, Need::Read)?;
        app.odds(&id, &input)
    })
    .await
}

impl App {
    /// The odds of `input` on the open, current character `id`.
    pub fn odds(&self, id: &str, input: &ocf_actions::StartInput) -> Result<Value, ApiError> {
        self.read_with(id, |session, cid, revision| {
            let odds = session.odds(cid, input, &mut NoHandoffs);
            // The runs' proposed sheets are given back, as after an action call.
            let _ = session.reclaim(cid);
            let odds = odds.map_err(|e| {
                let mut json = e.to_json();
                if let Value::Object(map) = &mut json {
                    map.entry("path").or_insert_with(|| json!(""));
                }
                ApiError::many(StatusCode::UNPROCESSABLE_ENTITY, vec![json])
            })?;
            Ok(json!({ "id": id, "revision": revision, "odds": odds.to_json() }))
        })
    }
}
