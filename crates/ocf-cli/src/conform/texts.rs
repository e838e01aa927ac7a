//! The text layer's calls (docs/spec/i18n.md): `build`, the build's problems of a pack folder (its
//! translation files checked with the rest), and `formatText`, keys looked up and formatted in a
//! locale on the loaded ruleset.

use super::Outcome;
use super::calls::{read_case_pack, read_character};
use super::case::Case;
use ocf_model::text::TextArg;
use serde::Deserialize;
use std::path::Path;

/// `build`: the case's first pack, a source folder, built with the others as its dependencies; the
/// output is `{ problems: [...] }`, every problem (warnings too) as `ocf check --json` gives it.
pub fn build(case: &Case, dir: &Path) -> Result<Outcome, String> {
    let Some(serde_json::Value::String(folder)) = case.packs.first() else {
        return Err("`build` needs a pack folder first in `packs`".into());
    };
    let dependencies = case.packs[1..]
        .iter()
        .map(|pack| read_case_pack(pack, dir))
        .collect::<Result<Vec<_>, _>>()?;
    let options = ocf_load::build::BuildOptions {
        dependencies,
        ..Default::default()
    };
    let report = ocf_load::build::build_report(&dir.join(folder), &options);
    let problems = serde_json::to_value(&report.problems).map_err(|e| e.to_string())?;
    Ok(Outcome::Output(serde_json::json!({ "problems": problems })))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FormatInput {
    locale: String,
    texts: Vec<FormatKey>,
    #[serde(default)]
    character: Option<serde_json::Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FormatKey {
    key: String,
    #[serde(default)]
    args: serde_json::Map<String, serde_json::Value>,
}

/// `formatText`: `{ locale, texts: [{ key, args? }], character? }` on the case's packs loaded in
/// order (and the character's homebrew on top); the output is `{ texts: [...] }`, each key's text
/// in the locale with its fallbacks, formatted with its arguments.
pub fn format_text(case: &Case, dir: &Path) -> Result<Outcome, String> {
    let input = FormatInput::deserialize(&case.input)
        .map_err(|e| format!("bad `formatText` input: {e}"))?;
    let releases = case
        .packs
        .iter()
        .map(|pack| read_case_pack(pack, dir))
        .collect::<Result<Vec<_>, _>>()?;
    let character = input
        .character
        .as_ref()
        .map(|c| read_character(c, dir))
        .transpose()?;
    let loaded =
        ocf_load::load_ruleset(&releases, &ocf_load::LoadOptions::default()).and_then(|ruleset| {
            match &character {
                Some(character) => ocf_load::load_homebrew(&ruleset, character),
                None => Ok(ruleset),
            }
        });
    let ruleset = match loaded {
        Ok(ruleset) => ruleset,
        Err(errors) => {
            return Ok(Outcome::Errors(
                errors
                    .iter()
                    .map(|e| serde_json::to_value(e).unwrap_or_default())
                    .collect(),
            ));
        }
    };
    let texts = ruleset.texts.texts(&input.locale);
    let out: Vec<String> = input
        .texts
        .iter()
        .map(|k| {
            let args: Vec<(&str, TextArg)> = k
                .args
                .iter()
                .map(|(name, v)| (name.as_str(), TextArg::from_json(v)))
                .collect();
            texts.text(&k.key, &args)
        })
        .collect();
    Ok(Outcome::Output(serde_json::json!({ "texts": out })))
}
