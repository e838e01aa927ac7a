//! References inside actions, effects, choices and follow-ups that loading qualifies in place
//! (EC step 3): a choice step's content and copies types, `{ link }` destinations, a `create`
//! follow-up's `link`; and the changes sent to a link, whose IDs are the linked character's and must
//! be qualified already ("their fields and copy types must be qualified IDs already
//! (`unknown-reference` otherwise) and are not resolved in the ruleset").

use ocf_model::{
    Action, Change, ChangeType, Choice, ChoiceOptions, Destination, Effect, EffectValue, FieldRef,
    FollowUp, Id, Namespace, Ruleset, Step, StepOptions, StepSource,
};

use crate::error::LoadErrorRecord;

/// Qualifies what it walks as written in `pack`, reporting at `path`.
pub struct Qualify<'a> {
    pub ruleset: &'a Ruleset,
    pub pack: &'a str,
    pub path: &'a str,
    pub errors: &'a mut Vec<LoadErrorRecord>,
}

impl Qualify<'_> {
    fn unknown(&mut self, what: &str, id: &str) -> LoadErrorRecord {
        LoadErrorRecord::new(
            "unknown-reference",
            format!("{what} `{id}` in pack `{}` names nothing", self.pack),
        )
        .at(self.path)
        .with("id", id)
        .with("pack", self.pack)
    }

    fn resolve(&mut self, id: &mut Id, namespace: Namespace, what: &str) {
        match self.ruleset.resolve(self.pack, id.as_str(), namespace) {
            Some(found) => *id = Id(found),
            None => {
                let error = self.unknown(what, id.as_str());
                self.errors.push(error);
            }
        }
    }

    pub fn actions(&mut self, actions: &mut [Action]) {
        for action in actions {
            self.steps(&mut action.steps);
        }
    }

    pub fn steps(&mut self, steps: &mut [Step]) {
        for step in steps {
            if let Some(StepOptions::Source(
                StepSource::Content { content: query } | StepSource::Copies { copies: query },
            )) = &mut step.options
            {
                self.resolve(&mut query.r#type, Namespace::ContentType, "content type");
            }
            let to_link = self.destination(&mut step.to);
            if to_link {
                self.link_changes(&step.changes);
            }
            if let Some(StepOptions::Written(options)) = &mut step.options {
                for option in options {
                    // An option without its own `to` sends its changes where the step does.
                    let link = match option.to {
                        Some(_) => self.destination(&mut option.to),
                        None => to_link,
                    };
                    if link {
                        self.link_changes(&option.changes);
                    }
                }
            }
            for case in &mut step.cases {
                self.steps(&mut case.steps);
            }
            if let Some(otherwise) = &mut step.r#else {
                self.steps(&mut otherwise.steps);
            }
        }
    }

    pub fn effects(&mut self, effects: &mut [Effect]) {
        for effect in effects {
            let (to, changes) = match &mut effect.value {
                Some(EffectValue::Option(option)) => (&mut option.to, &option.changes),
                Some(EffectValue::Changes(value)) => (&mut value.to, &value.changes),
                _ => continue,
            };
            if self.destination(to) {
                self.link_changes(changes);
            }
        }
    }

    pub fn choices(&mut self, choices: &mut [Choice]) {
        for choice in choices {
            self.effects(&mut choice.effects);
            if let ChoiceOptions::Inline(options) = &mut choice.options {
                for option in options {
                    self.effects(&mut option.effects);
                    self.choices(&mut option.choices);
                }
            }
        }
    }

    pub fn follow_ups(&mut self, follow_ups: &mut [FollowUp]) {
        for f in follow_ups {
            if self.destination(&mut f.to) {
                self.link_changes(&f.changes);
            }
            if f.create == Some(true)
                && let Some(link) = &mut f.link
            {
                self.resolve(link, Namespace::Link, "link slot");
            }
        }
    }

    /// Qualifies a `{ link }` destination; whether it is one.
    fn destination(&mut self, to: &mut Option<Destination>) -> bool {
        match to {
            Some(Destination::Link { link }) => {
                self.resolve(link, Namespace::Link, "link slot");
                true
            }
            _ => false,
        }
    }

    /// Changes for a linked character: their field IDs, copy types and written `addItem` items
    /// must be qualified (`<pack>:<id>`); they are kept as written.
    fn link_changes(&mut self, changes: &[Change]) {
        for change in changes {
            if let Some(FieldRef::Literal(field)) = &change.field {
                self.qualified(field.as_str(), "field");
            }
            if let Some(copies) = &change.copies {
                self.qualified(copies.r#type.as_str(), "copy type");
            }
            if change.r#type == ChangeType::AddItem
                && let Some(ocf_model::EntryRef::New(entry)) = &change.entry
                && let Some(item) = string_literal(entry.item.as_str())
            {
                self.qualified(item, "item");
            }
        }
    }

    fn qualified(&mut self, id: &str, what: &str) {
        if !id.contains(':') {
            let error = self.unknown(what, id).with("kind", "link");
            self.errors.push(LoadErrorRecord {
                message: format!(
                    "{what} `{id}` in a change sent to a link is not qualified: the linked character's IDs are written `<pack>:<id>`"
                ),
                ..error
            });
        }
    }
}

/// The text of a formula that is a single quoted string literal with no escapes.
fn string_literal(formula: &str) -> Option<&str> {
    let text = formula.trim();
    let quote = text.chars().next().filter(|c| *c == '\'' || *c == '"')?;
    let inner = text.strip_prefix(quote)?.strip_suffix(quote)?;
    (!inner.contains(quote) && !inner.contains('\\')).then_some(inner)
}
