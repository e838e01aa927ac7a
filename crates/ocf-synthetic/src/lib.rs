//! A generated large character, the one `cargo bench -p ocf-engine` and `ocf bench-edit` measure:
//! out of the engine library (issue 46), a dependency of the benchmarks, examples and tests only
//! (and of `ocf bench-edit`).
//!
//! The ruleset has one pack, `g`, whose fields come in three layers: `scores` input scores
//! (`g:score{a}`, default 10), as many modifiers (`g:mod{a} = floor((score{a} - 10) / 2)`), and the
//! rest derived fields `g:f{i}`, each reading the modifier `mod{i % scores}` and, from the second
//! round on, the derived field `scores` before it (`f{i - scores}`). So a score reaches its
//! modifier and a chain of derived fields, as an ability reaches its modifier, skills, saves and
//! attacks. At the default size, 2 000 fields, there are 100 scores and chains of 18 derived fields:
//! through formulas a score reaches 20 fields, itself included. Effects reach further: item `c`
//! adds `mod{c % scores}` to a derived field, which brings that field's chain along (`g:score0`
//! has 37 dependents at the default size, as `ocf bench-edit` finds).
//!
//! The character saves every score (12, but `g:score0` as asked) and carries `scores` copies of
//! items, each with 3 effects on derived fields (one conditional on the copy being equipped, one
//! adding a modifier under a `highestOnly` stacking key, one `atLeast`): 100 copies and 300 active
//! effects at the default size.

use ocf_model::{Character, Ruleset};
use serde_json::{Value, json};

/// The size of a generated character; [`Synthetic::default`] is the benchmark's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Synthetic {
    fields: usize,
}

/// Why a size was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SizeError(pub String);

impl std::fmt::Display for SizeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SizeError {}

impl Default for Synthetic {
    fn default() -> Synthetic {
        Synthetic {
            fields: Synthetic::DEFAULT_FIELDS,
        }
    }
}

impl Synthetic {
    /// The benchmark's size: 2 000 fields, 100 scores, 100 copies, 300 effects.
    pub const DEFAULT_FIELDS: usize = 2000;
    /// The fewest fields: a score, its modifier and one derived field.
    pub const MIN_FIELDS: usize = 3;
    /// The most fields: a bound on what the generated ruleset may hold in memory (a few hundred
    /// bytes of declaration per field, and the database's memos), far above any sheet's size.
    pub const MAX_FIELDS: usize = 200_000;
    /// The input field [`Synthetic::character`] sets as asked, and the benchmark edits.
    pub const EDITED: &'static str = "g:score0";
    /// One field per score, one modifier per score, and 18 derived fields per score.
    const FIELDS_PER_SCORE: usize = 20;

    /// A character of `fields` fields in all ([`Synthetic::MIN_FIELDS`] to
    /// [`Synthetic::MAX_FIELDS`]): `max(1, fields / 20)` scores, as many modifiers and copies, and
    /// the rest derived fields.
    pub fn with_fields(fields: usize) -> Result<Synthetic, SizeError> {
        if !(Synthetic::MIN_FIELDS..=Synthetic::MAX_FIELDS).contains(&fields) {
            return Err(SizeError(format!(
                "a generated character has {} to {} fields, not {fields}",
                Synthetic::MIN_FIELDS,
                Synthetic::MAX_FIELDS
            )));
        }
        Ok(Synthetic { fields })
    }

    /// How many fields the ruleset declares.
    pub fn fields(&self) -> usize {
        self.fields
    }

    /// How many input scores (and modifiers) there are.
    pub fn scores(&self) -> usize {
        (self.fields / Synthetic::FIELDS_PER_SCORE).max(1)
    }

    /// How many derived fields `g:f{i}` there are.
    pub fn derived(&self) -> usize {
        self.fields - 2 * self.scores()
    }

    /// How many item copies the character carries (each with 3 effects, all active).
    pub fn copies(&self) -> usize {
        self.scores()
    }

    /// The ruleset: one pack `g` with the fields and one item per copy.
    pub fn ruleset(&self) -> Ruleset {
        let scores = self.scores();
        let derived = self.derived();
        let mut fields = serde_json::Map::new();
        for a in 0..scores {
            fields.insert(
                format!("g:score{a}"),
                json!({ "declaredIn": "g", "type": "integer", "input": true, "default": 10 }),
            );
            fields.insert(
                format!("g:mod{a}"),
                json!({ "declaredIn": "g", "type": "integer", "formula": format!("floor((score{a} - 10) / 2)") }),
            );
        }
        for i in 0..derived {
            let formula = if i < scores {
                format!("mod{i} + 1")
            } else {
                format!("f{} + mod{} + 1", i - scores, i % scores)
            };
            fields.insert(
                format!("g:f{i}"),
                json!({ "declaredIn": "g", "type": "integer", "formula": formula, "tags": ["derived"] }),
            );
        }
        let mut content = serde_json::Map::new();
        for c in 0..self.copies() {
            let target = |k: usize| format!("g:f{}", (c * 7 + k * 13) % derived);
            content.insert(
                format!("g:item{c}"),
                json!({
                    "declaredIn": "g",
                    "id": format!("g:item{c}"),
                    "type": "g:gear",
                    "effects": [
                        { "target": target(0), "op": "add", "value": "1", "when": "self.equipped" },
                        { "target": target(1), "op": "add", "value": format!("mod{}", c % scores), "stackKey": "item" },
                        { "target": target(2), "op": "atLeast", "value": "3" },
                    ],
                }),
            );
        }
        serde_json::from_value(json!({
            "packs": [{ "id": "g", "version": "1.0.0", "specVersion": "1.0.0", "scope": ["g"] }],
            "settings": { "stacking": { "keys": { "item": "highestOnly" } } },
            "fields": fields,
            "contentTypes": { "g:gear": { "declaredIn": "g" } },
            "content": content,
        }))
        .expect("the generated ruleset fits the ruleset format")
    }

    /// The choice [`Synthetic::ruleset_with_choice`] adds: a rules-level choice, its path's only
    /// segment.
    pub const CHOICE: &'static str = "g:feat";

    /// [`Synthetic::ruleset`] with a rules-level choice [`Synthetic::CHOICE`] of `options` feats
    /// (content type `g:feat`, `g:feat0`…), each adding 1 to one derived field, a different one
    /// for each feat while there are enough: what listOptions' benchmark lists. The benchmarks of
    /// [`Synthetic::ruleset`] are unchanged: it has no choice.
    pub fn ruleset_with_choice(&self, options: usize) -> Ruleset {
        let mut ruleset = serde_json::to_value(self.ruleset()).expect("a ruleset is JSON");
        let derived = self.derived();
        let content = ruleset["content"]
            .as_object_mut()
            .expect("content is a map");
        for k in 0..options {
            content.insert(
                format!("g:feat{k}"),
                json!({
                    "declaredIn": "g",
                    "id": format!("g:feat{k}"),
                    "type": "g:feat",
                    "effects": [{ "target": format!("g:f{}", (k * 37) % derived), "op": "add", "value": "1" }],
                }),
            );
        }
        ruleset["contentTypes"]["g:feat"] = json!({ "declaredIn": "g" });
        ruleset["choices"] = json!({
            Synthetic::CHOICE: {
                "declaredIn": "g", "id": "feat", "required": false,
                "options": { "content": { "type": "g:feat" } },
            }
        });
        serde_json::from_value(ruleset).expect("the generated ruleset fits the ruleset format")
    }

    /// [`Synthetic::ruleset`] with two rules actions, `g:proposed` and `g:given`: a changes step
    /// raising `g:score0` to 18 (or to the optional parameter `to`), then a changes step reading
    /// the derived field `read` (a local ID, `f1700`) on the proposed sheet, or on the given one:
    /// what the proposed-sheet benchmarks and tests of ocf-actions run (EA "The proposed
    /// sheet").
    pub fn ruleset_with_proposed(&self, read: &str) -> Ruleset {
        let mut ruleset = serde_json::to_value(self.ruleset()).expect("a ruleset is JSON");
        for id in ["proposed", "given"] {
            ruleset["actions"][format!("g:{id}")] = json!({
                "declaredIn": "g",
                "id": id,
                "params": { "to": { "type": "integer", "optional": true } },
                "steps": [
                    { "id": "raise", "kind": "changes",
                      "changes": [{ "type": "set", "field": "score0",
                                    "value": "has(params.to) ? params.to : 18" }] },
                    { "id": "read", "kind": "changes", "sheet": id,
                      "changes": [{ "type": "set", "field": "score1", "value": read }] },
                ],
            });
        }
        serde_json::from_value(ruleset).expect("the generated ruleset fits the ruleset format")
    }

    /// The character: every score saved as 12 but [`Synthetic::EDITED`], saved as `edited`; one
    /// copy of each item, every other one equipped.
    pub fn character(&self, edited: i64) -> Character {
        let mut values = serde_json::Map::new();
        for a in 0..self.scores() {
            values.insert(
                format!("g:score{a}"),
                json!(if a == 0 { edited } else { 12 }),
            );
        }
        let inventory: Vec<Value> = (0..self.copies())
            .map(|c| json!({ "id": format!("c{c}"), "item": format!("g:item{c}"), "equipped": c % 2 == 0 }))
            .collect();
        serde_json::from_value(json!({
            "id": "big", "specVersion": "1.0.0", "values": values, "inventory": inventory,
        }))
        .expect("the generated character fits the character format")
    }
}
