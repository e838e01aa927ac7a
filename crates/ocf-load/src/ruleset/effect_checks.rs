//! Load checks on effects that need the merged ruleset (EF): `then` only where an effect has a copy
//! (`then-without-copy`), and tallies only as some visible pack declares them (`unknown-tally`).

use ocf_model::{Choice, ChoiceOptions, Effect, PackRelease, Ruleset, Scope, Target};

use crate::error::{LoadErrorRecord, content_path, rules_path};

/// Every `then-without-copy` and `unknown-tally` of `releases`, in document order.
pub fn check(ruleset: &Ruleset, releases: &[PackRelease]) -> Result<(), Vec<LoadErrorRecord>> {
    let mut errors = Vec::new();
    for release in releases {
        let pack = release.id.as_str();
        let mut c = Checker {
            ruleset,
            pack,
            path: rules_path(pack),
            errors: &mut errors,
        };
        let rules = &release.rules;
        // EF: "on the rules' `effects`, a situational choice's, a choice's `effects` or an
        // `applied`-scope effect it is a load error, `then-without-copy`".
        c.effects("/effects", &rules.effects, false);
        for (id, situational) in rules.situational.iter() {
            c.effects(
                &format!("/situational/{}/effects", escape(id)),
                &situational.effects,
                false,
            );
        }
        // A rules-level choice's owner is the rules, which have no copy (EC "Activation": a
        // picked inline option's `self` and owner are "the owner of the choice").
        c.choices("", &rules.choices, false);
        for (name, ty) in rules.content_types.iter() {
            c.effects(
                &format!("/contentTypes/{}/effects", escape(name)),
                &ty.effects,
                true,
            );
        }
        for (index, item) in release.content.iter().enumerate() {
            c.path = content_path(pack, index);
            c.effects("/effects", &item.effects, true);
            c.choices("", &item.choices, true);
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

struct Checker<'a> {
    ruleset: &'a Ruleset,
    pack: &'a str,
    /// The document being walked.
    path: String,
    errors: &'a mut Vec<LoadErrorRecord>,
}

impl Checker<'_> {
    /// `copy`: the effects have a copy when their scope is `holder` (content's own, an inline
    /// option's); they never do on the rules, a situational choice or a choice's `effects`.
    fn effects(&mut self, at: &str, effects: &[std::sync::Arc<Effect>], copy: bool) {
        for (i, effect) in effects.iter().enumerate() {
            let at = format!("{at}/{i}");
            let applied = effect.scope == Some(Scope::Applied);
            if !effect.then.is_empty() && (!copy || applied) {
                self.errors.push(
                    LoadErrorRecord::new(
                        "then-without-copy",
                        format!(
                            "the effect at {}{at} has `then`, but no copy to change: only a held content's effect may carry it",
                            self.path
                        ),
                    )
                    .at(self.path.clone())
                    .with("pack", self.pack)
                    .with("effect", at.as_str()),
                );
            }
            if let Target::Rolls {
                tally: Some(tally), ..
            } = &effect.target
                && !self.visible_tally(tally)
            {
                self.errors.push(
                    LoadErrorRecord::new(
                        "unknown-tally",
                        format!(
                            "the tally `{tally}` at {}{at} is declared by no pack `{}` sees",
                            self.path, self.pack
                        ),
                    )
                    .at(self.path.clone())
                    .with("tally", tally.as_str())
                    .with("pack", self.pack),
                );
            }
        }
    }

    /// `owned`: the choices' owner is a copy (content's choices), not the rules.
    fn choices(&mut self, at: &str, choices: &[Choice], owned: bool) {
        for (i, choice) in choices.iter().enumerate() {
            let at = format!("{at}/choices/{i}");
            self.effects(&format!("{at}/effects"), &choice.effects, false);
            if let ChoiceOptions::Inline(options) = &choice.options {
                for (j, option) in options.iter().enumerate() {
                    let at = format!("{at}/options/{j}");
                    // An inline option's own effects apply with its owner's `self`.
                    self.effects(&format!("{at}/effects"), &option.effects, owned);
                    self.choices(&at, &option.choices, owned);
                }
            }
        }
    }

    /// EF "Roll tallies": "A tally name no visible pack declares is the load error
    /// `unknown-tally`": the pack's own `rollTallies` and its dependencies', never a loaded pack it
    /// doesn't depend on. A name written `<pack>:<tally>` must be that visible pack's.
    fn visible_tally(&self, tally: &str) -> bool {
        let Some(loaded) = self.ruleset.pack(self.pack) else {
            return true;
        };
        let declares = |pack: &str, name: &str| {
            self.ruleset
                .roll_tallies
                .get(pack)
                .is_some_and(|names| names.iter().any(|n| n == name))
        };
        match tally.split_once(':') {
            Some((pack, name)) => loaded.scope.iter().any(|p| p == pack) && declares(pack, name),
            None => loaded.scope.iter().any(|p| declares(p, tally)),
        }
    }
}

/// RFC 6901 escaping of one pointer segment.
fn escape(key: &str) -> String {
    crate::formulas::escape(key)
}
