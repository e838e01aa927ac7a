//! `listOptions` cases: `{ character, path, links? }` on the case's packs loaded in order; the
//! output is listOptions' (docs/spec/engine-interface.md, "listOptions"), a refused path its error.

use super::Outcome;
use super::calls::{case_ruleset, read_character};
use super::case::Case;
use serde::Deserialize;
use std::path::Path;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct OptionsInput {
    character: serde_json::Value,
    path: serde_json::Value,
    #[serde(default)]
    links: serde_json::Map<String, serde_json::Value>,
}

pub fn list_options(case: &Case, dir: &Path) -> Result<Outcome, String> {
    let input = OptionsInput::deserialize(&case.input)
        .map_err(|e| format!("bad `listOptions` input: {e}"))?;
    let character = read_character(&input.character, dir)?;
    let ruleset = match case_ruleset(case, dir)? {
        Ok(ruleset) => ruleset,
        Err(errors) => return Ok(errors),
    };
    let path = match ocf_engine::options::path::ChoicePath::from_json(&input.path) {
        Ok(path) => path,
        Err(e) => return Ok(Outcome::Errors(vec![e.to_json()])),
    };
    let mut session = ocf_engine::Session::new(ruleset);
    let id = session.open(&character, &[]);
    if !session.homebrew_errors(id).is_empty() {
        return Ok(Outcome::Errors(session.homebrew_errors(id).to_vec()));
    }
    let _ = session.set_links(id, input.links);
    Ok(match session.list_options(id, &path) {
        Ok(listed) => Outcome::Output(listed.to_json()),
        Err(e) => Outcome::Errors(vec![e.to_json()]),
    })
}
