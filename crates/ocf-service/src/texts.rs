//! The text layer's route (docs/spec/i18n.md, display-hints.md): a character's packs' texts in a
//! locale, and their display groups and field hints, so a page can name and lay out a sheet
//! without knowing a pack.
//!
//! | method and path | what it does |
//! | --- | --- |
//! | `GET /api/characters/{id}/texts?lang=TAG` | `{ id, locale, texts, displayGroups, fieldHints }`: every key the packs (and the engine) give, its message in `TAG` by the fallback order (ICU MessageFormat, as written); the ruleset's groups and hints |

use std::sync::Arc;

use axum::Router;
use axum::extract::{Extension, Path, Query, State};
use axum::routing::get;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::accounts::Who;
use crate::api::{Answer, blocking};
use crate::app::{App, Need};
use crate::error::ApiError;

pub fn routes() -> Router<Arc<App>> {
    Router::new().route("/api/characters/{id}/texts", get(texts))
}

#[derive(Deserialize)]
struct Lang {
    lang: Option<String>,
}

#[tracing::instrument(name = "serve.texts", level = "info", skip_all, fields(character = %id))]
async fn texts(
    State(app): State<Arc<App>>,
    Extension(who): Extension<Who>,
    Path(id): Path<String>,
    Query(query): Query<Lang>,
) -> Answer {
    blocking(app, move |app| {
        // The texts come from the character's packs: whoever may not read the character may
        // not learn which packs it uses either.
        app.authorize(&who, &id, Need::Read)?;
        answer(app, &id, query.lang.as_deref())
    })
    .await
}

fn answer(app: &App, id: &str, lang: Option<&str>) -> Result<Value, ApiError> {
    let ruleset = app.ruleset_of(id)?;
    let locale = match lang {
        Some(lang) if ocf_model::text::valid_locale(lang) => lang.to_owned(),
        Some(lang) => {
            return Err(ApiError::bad_request(
                "invalid-locale",
                format!("`{lang}` is not a BCP 47 locale tag"),
                "/lang",
            ));
        }
        None => ruleset
            .packs
            .first()
            .and_then(|p| ruleset.texts.default_locales.get(&p.id))
            .cloned()
            .unwrap_or_else(|| ocf_model::text::DEFAULT_LOCALE.to_owned()),
    };
    let texts = ruleset.texts.texts(&locale);
    let mut messages = Map::new();
    let engine = ocf_model::text::engine_texts().iter().map(|(k, _)| k);
    for key in ruleset.texts.keys().into_iter().chain(engine) {
        if let Some(found) = texts.message(key) {
            messages.insert(key.to_owned(), Value::String(found.message.to_owned()));
        }
    }
    Ok(json!({
        "id": id,
        "locale": locale,
        "texts": messages,
        "displayGroups": ruleset.display_groups,
        "fieldHints": ruleset.field_hints,
    }))
}
