//! The roll summary (EA "The roll summary"): what the roll is rolled against, worked out before
//! any face, in the step's band context. Output only: it never fails the action and a replay never
//! reads it.
//!
//! This part reports the band set, its bands in order with their conditions as written, and the
//! running action's flags; resolving each condition's action-time values into literals, and the
//! structured `tests`, are left (see the report of issue 14).

use serde_json::{Value as Json, json};

use crate::steps::{Frame, data_json};

pub fn summary(ruleset: &ocf_model::Ruleset, frame: &Frame<'_>, bands: Option<&str>) -> Json {
    let mut out = serde_json::Map::new();
    if let Some(id) = bands
        && let Some((qualified, set)) = super::classify::band_set(ruleset, frame.pack, id)
    {
        out.insert("bandSet".into(), json!(qualified));
        if let Some(v) = &set.decl.value {
            out.insert("value".into(), json!(v.as_str()));
        }
        out.insert(
            "bands".into(),
            Json::Array(
                set.decl
                    .bands
                    .iter()
                    .map(|b| json!({ "band": b.id, "when": b.when.as_str() }))
                    .collect(),
            ),
        );
    }
    out.insert("flags".into(), data_json(&frame.flags));
    Json::Object(out)
}
