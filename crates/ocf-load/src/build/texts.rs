//! The build's checks of a pack's translation files (docs/spec/i18n.md "The build"): each file's
//! locale, each key once per locale, every key naming something the pack or a dependency declares
//! (`unknown-text-key`), every message parsing (`invalid-message`) and using only the arguments its
//! key gives (`unknown-message-argument`), and every declared thing having its text in the pack's
//! default locale (`missing-text`, a warning).

use std::collections::BTreeMap;

use ocf_model::text::{
    DEFAULT_LOCALE, ENGINE_ROOTS, Message, PackTexts, TextFile, engine_texts, valid_locale,
};
use ocf_model::{
    Action, Choice, ChoiceOptions, ChoiceSource, ContentItem, EffectValue, Keyed, PackRelease,
    ParamEntry, Results, Step, StepKind, StepOptions,
};

use super::locations::{Locations, escape};
use super::problem::Problem;

/// One translation file read.
pub struct TextSource<'a> {
    pub file: &'a str,
    pub texts: &'a TextFile,
    pub locations: &'a Locations,
}

/// What a key names: the arguments its message may use, whether the pack's default locale must
/// have it, and where the thing is declared (a file and pointer), for the warning.
#[derive(Debug, Clone)]
pub struct KeySpec {
    pub args: Vec<String>,
    pub required: bool,
    pub at: Option<Declared>,
}

/// Where a thing is declared: a pointer into the merged rules document, or into a content item.
#[derive(Debug, Clone)]
pub enum Declared {
    Rules(String),
    Content(usize, String),
}

/// The locale a translation file's name gives: `i18n/<locale>.yaml` or `i18n/<locale>/….yaml`.
pub fn locale_of(file: &str) -> Option<&str> {
    let rest = file.strip_prefix("i18n/")?;
    Some(match rest.split_once('/') {
        Some((folder, _)) => folder,
        None => rest.strip_suffix(".yaml").unwrap_or(rest),
    })
}

/// The translation files gathered by locale, in path order: `invalid-locale` for a file whose name
/// is not a locale, `duplicate-text-key` for a key a locale's files give twice.
pub fn gather(files: &[TextSource<'_>], problems: &mut Vec<Problem>) -> PackTexts {
    let mut texts = PackTexts::default();
    let mut first: BTreeMap<(String, String), &str> = BTreeMap::new();
    for source in files {
        let Some(locale) = locale_of(source.file).filter(|l| valid_locale(l)) else {
            problems.push(
                Problem::error(
                    "invalid-locale",
                    format!(
                        "`{}` is not under a BCP 47 locale tag (`i18n/en.yaml`, `i18n/pt-BR/…`)",
                        source.file
                    ),
                )
                .in_file(source.file),
            );
            continue;
        };
        let table = texts.0.entry(locale.to_owned()).or_default();
        for (key, message) in source.texts.iter() {
            let pointer = format!("/{}", escape(key));
            if let Some(earlier) = first.get(&(locale.to_owned(), key.to_owned())) {
                problems.push(
                    Problem::error(
                        "duplicate-text-key",
                        format!("`{key}` is given in `{locale}` already, in `{earlier}`"),
                    )
                    .in_file(source.file)
                    .at(&pointer, source.locations.key(&pointer))
                    .with("key", key)
                    .with("locale", locale),
                );
                continue;
            }
            first.insert((locale.to_owned(), key.to_owned()), source.file);
            table.0.insert(key.to_owned(), message.clone());
        }
    }
    texts
}

/// Where a declaration is: its file, position and pointer.
pub type Located = (String, Option<super::Position>, String);

/// Finds a declaration's place.
pub type Locate<'a> = dyn Fn(&Declared) -> Option<Located> + 'a;

/// Checks the translation files against what the release and its given dependencies declare.
/// `locate` gives a declaration's file and position, for the `missing-text` warnings.
pub fn check(
    release: &PackRelease,
    dependencies: &[&PackRelease],
    files: &[TextSource<'_>],
    locate: &Locate<'_>,
    problems: &mut Vec<Problem>,
) {
    let own = catalogue(release);
    let mut others: BTreeMap<&str, Keyed<KeySpec>> = BTreeMap::new();
    for source in files {
        if !locale_of(source.file).is_some_and(valid_locale) {
            continue;
        }
        for (key, text) in source.texts.iter() {
            let pointer = format!("/{}", escape(key));
            let key_at = source.locations.key(&pointer);
            let unknown = |why: String| {
                Problem::error("unknown-text-key", why)
                    .in_file(source.file)
                    .at(&pointer, key_at)
                    .with("key", key)
            };
            let root = key.split('.').next().unwrap_or(key);
            let spec: Option<KeySpec> = if let Some((pack, rest)) =
                root.contains(':').then(|| key.split_once(':')).flatten()
            {
                if pack == release.id.as_str() {
                    own.get(rest).cloned()
                } else if release.dependencies.get(pack).is_none() {
                    problems.push(unknown(format!(
                        "`{key}` names the pack `{pack}`, which is not a dependency"
                    )));
                    continue;
                } else {
                    match dependencies.iter().find(|d| d.id.as_str() == pack) {
                        Some(dep) => others
                            .entry(pack)
                            .or_insert_with(|| catalogue(dep))
                            .get(rest)
                            .cloned(),
                        // Not given: `unchecked-dependency` says what is left unchecked.
                        None => continue,
                    }
                }
            } else if ENGINE_ROOTS.contains(&root) {
                engine_texts().get(key).map(|message| KeySpec {
                    args: Message::parse(message)
                        .map(|m| m.arguments())
                        .unwrap_or_default(),
                    required: false,
                    at: None,
                })
            } else {
                own.get(key).cloned()
            };
            let Some(spec) = spec else {
                problems.push(unknown(format!(
                    "`{key}` names nothing the pack or its dependencies declare"
                )));
                continue;
            };
            let value_at = source
                .locations
                .text(&pointer)
                .or_else(|| source.locations.value(&pointer));
            match Message::parse(text) {
                Err(error) => {
                    let at = value_at.map(|at| super::Position {
                        line: at.line,
                        column: if error.line == 1 {
                            at.column + error.column - 1
                        } else {
                            at.column
                        },
                    });
                    problems.push(
                        Problem::error(
                            "invalid-message",
                            format!("`{key}`: {} (ICU MessageFormat)", error.message),
                        )
                        .in_file(source.file)
                        .at(&pointer, at)
                        .with("key", key),
                    );
                }
                Ok(message) => {
                    for argument in message.arguments() {
                        if !spec.args.contains(&argument) {
                            let given = if spec.args.is_empty() {
                                "none".to_owned()
                            } else {
                                spec.args
                                    .iter()
                                    .map(|a| format!("`{a}`"))
                                    .collect::<Vec<_>>()
                                    .join(", ")
                            };
                            problems.push(
                                Problem::error(
                                    "unknown-message-argument",
                                    format!(
                                        "`{key}` uses the argument `{argument}`, which its key \
                                         does not give (it gives {given})"
                                    ),
                                )
                                .in_file(source.file)
                                .at(&pointer, value_at)
                                .with("key", key)
                                .with("argument", argument),
                            );
                        }
                    }
                }
            }
        }
    }

    // Each declared thing's text in the default locale, once the pack has translation files.
    if files.is_empty() {
        return;
    }
    let default = release.default_locale.as_deref().unwrap_or(DEFAULT_LOCALE);
    let given: std::collections::HashSet<&str> = files
        .iter()
        .filter(|f| locale_of(f.file) == Some(default))
        .flat_map(|f| f.texts.iter().map(|(k, _)| k))
        .collect();
    for (key, spec) in own.iter() {
        if !spec.required || given.contains(key) {
            continue;
        }
        let (file, at, pointer) = spec
            .at
            .as_ref()
            .and_then(locate)
            .unwrap_or_else(|| ("pack.yaml".to_owned(), None, String::new()));
        problems.push(
            Problem::warning(
                "missing-text",
                format!("`{key}` has no text in the pack's default locale `{default}`"),
            )
            .in_file(&file)
            .at(&pointer, at)
            .with("key", key)
            .with("locale", default),
        );
    }
}

/// Every key a release's declarations give, relative to the pack (i18n.md "Keys").
pub fn catalogue(release: &PackRelease) -> Keyed<KeySpec> {
    let mut c = Catalogue::default();
    let rules = &release.rules;
    for tag in &rules.tags {
        let mut name = tag.as_str();
        loop {
            c.add(
                format!("tags.{name}.name"),
                &[],
                true,
                Declared::Rules("/tags".into()),
            );
            match name.rfind('.') {
                Some(cut) => name = &name[..cut],
                None => break,
            }
        }
    }
    for (id, _) in rules.fields.iter() {
        let at = Declared::Rules(format!("/fields/{}", escape(id)));
        c.add(format!("fields.{id}.name"), &[], true, at.clone());
        c.add(format!("fields.{id}.abbr"), &[], false, at.clone());
        c.add(format!("fields.{id}.description"), &[], false, at);
    }
    for (name, decl) in rules.content_types.iter() {
        let at = format!("/contentTypes/{}", escape(name));
        let root = format!("types.{name}");
        c.add(
            format!("{root}.name"),
            &["count"],
            true,
            Declared::Rules(at.clone()),
        );
        c.add(
            format!("{root}.description"),
            &[],
            false,
            Declared::Rules(at.clone()),
        );
        c.effects(&root, &decl.effects, &|p| {
            Declared::Rules(format!("{at}{p}"))
        });
        for (i, action) in decl.actions.iter().enumerate() {
            c.action_at(&format!("{root}.actions"), action, &|p| {
                Declared::Rules(format!("{at}/actions/{i}{p}"))
            });
        }
    }
    for (id, decl) in rules.situational.iter() {
        let at = Declared::Rules(format!("/situational/{}", escape(id)));
        c.add(format!("situational.{id}.name"), &[], true, at.clone());
        for value in &decl.values {
            if let Some(value) = value.as_str() {
                c.add(
                    format!("situational.{id}.options.{value}.name"),
                    &[],
                    true,
                    at.clone(),
                );
            }
        }
    }
    for (id, set) in rules.bands.iter() {
        let at = format!("/bands/{}", escape(id));
        c.add(
            format!("bands.{id}.name"),
            &[],
            true,
            Declared::Rules(at.clone()),
        );
        for (i, band) in set.bands.iter().enumerate() {
            let band_at = Declared::Rules(format!("{at}/bands/{i}"));
            c.add(
                format!("bands.{id}.{}.name", band.id),
                &[],
                true,
                band_at.clone(),
            );
            // `value`, the first test's value, and `value1`, … for each test (EA "Wording"): as
            // many as the condition has comparisons joined by `&&`.
            let tests = band.when.as_str().matches("&&").count() + 1;
            let mut args = vec!["value".to_owned()];
            args.extend((1..=tests).map(|n| format!("value{n}")));
            c.add_args(
                format!("bands.{id}.{}.condition", band.id),
                args,
                false,
                band_at,
            );
        }
    }
    for (i, action) in rules.actions.iter().enumerate() {
        c.action_at("actions", action, &|p| {
            Declared::Rules(format!("/actions/{i}{p}"))
        });
    }
    for (i, choice) in rules.choices.iter().enumerate() {
        c.choice("choices", choice, &|p| {
            Declared::Rules(format!("/choices/{i}{p}"))
        });
    }
    for (id, _) in rules.links.iter() {
        let at = Declared::Rules(format!("/links/{}", escape(id)));
        c.add(format!("links.{id}.name"), &[], true, at);
    }
    for (i, follow_up) in rules.follow_ups.iter().enumerate() {
        let at = Declared::Rules(format!("/followUps/{i}"));
        c.add(format!("followUps.{}.name", follow_up.id), &[], true, at);
    }
    for (i, start) in rules.creation.iter().enumerate() {
        let at = Declared::Rules(format!("/creation/{i}"));
        c.add(format!("creation.{}.name", start.id), &[], true, at);
    }
    for (i, group) in rules.display_groups.iter().enumerate() {
        let at = Declared::Rules(format!("/displayGroups/{i}"));
        c.add(format!("groups.{}.name", group.id), &[], true, at);
    }
    for (i, hint) in rules.odds_hints.iter().enumerate() {
        let at = Declared::Rules(format!("/oddsHints/{i}"));
        c.add(
            format!("odds.{}.name", hint.id),
            &["chance", "mean", "name"],
            true,
            at,
        );
    }
    if let Some(settings) = serde_json::to_value(&rules.settings)
        .ok()
        .and_then(|v| v.as_object().cloned())
    {
        for key in settings.keys() {
            c.add(
                format!("settings.{key}.name"),
                &[],
                false,
                Declared::Rules("/settings".into()),
            );
        }
    }
    for (index, item) in release.content.iter().enumerate() {
        c.item(index, item);
    }
    c.keys
}

#[derive(Default)]
struct Catalogue {
    keys: Keyed<KeySpec>,
}

impl Catalogue {
    fn add(&mut self, key: String, args: &[&str], required: bool, at: Declared) {
        self.add_args(
            key,
            args.iter().map(|a| (*a).to_owned()).collect(),
            required,
            at,
        );
    }

    fn add_args(&mut self, key: String, args: Vec<String>, required: bool, at: Declared) {
        // The first declaration keeps its place; a key two things give (an ID reused) needs one
        // text.
        self.keys.0.entry(key).or_insert(KeySpec {
            args,
            required,
            at: Some(at),
        });
    }

    fn item(&mut self, index: usize, item: &ContentItem) {
        let Some(id) = &item.id else {
            return;
        };
        let id = id.as_str();
        let at = |p: &str| Declared::Content(index, p.to_owned());
        self.add(format!("{id}.name"), &[], true, at("/id"));
        self.add(format!("{id}.description"), &[], false, at("/id"));
        self.effects(id, &item.effects, &at);
        for (i, choice) in item.choices.iter().enumerate() {
            self.choice(&format!("{id}.choices"), choice, &|p| {
                at(&format!("/choices/{i}{p}"))
            });
        }
        for (i, action) in item.actions.iter().enumerate() {
            self.action_at(&format!("{id}.actions"), action, &|p| {
                at(&format!("/actions/{i}{p}"))
            });
        }
        for (i, follow_up) in item.follow_ups.iter().enumerate() {
            self.add(
                format!("{id}.followUps.{}.name", follow_up.id),
                &[],
                true,
                at(&format!("/followUps/{i}")),
            );
        }
    }

    /// The options `option` effects add: `<root>.options.<id>.name`.
    fn effects(
        &mut self,
        root: &str,
        effects: &[std::sync::Arc<ocf_model::Effect>],
        at: &dyn Fn(&str) -> Declared,
    ) {
        for (i, effect) in effects.iter().enumerate() {
            if let Some(EffectValue::Option(option)) = &effect.value {
                self.add(
                    format!("{root}.options.{}.name", option.id),
                    &[],
                    true,
                    at(&format!("/effects/{i}")),
                );
            }
        }
    }

    /// A choice under `root` (`choices`, `<contentId>.choices`): its prompt (argument `slot` when
    /// it has slots), its inline options and their own choices (under
    /// `<choice>.options.<option>.choices`), and listed values' names (optional).
    fn choice(&mut self, root: &str, choice: &Choice, at: &dyn Fn(&str) -> Declared) {
        let key = format!("{root}.{}", choice.id);
        let args: &[&str] = if choice.slots.is_some() {
            &["slot"]
        } else {
            &[]
        };
        self.add(format!("{key}.prompt"), args, true, at(""));
        self.add(format!("{key}.name"), args, false, at(""));
        match &choice.options {
            ChoiceOptions::Inline(options) => {
                for (i, option) in options.iter().enumerate() {
                    self.add(
                        format!("{key}.options.{}.name", option.id),
                        &[],
                        true,
                        at(&format!("/options/{i}")),
                    );
                    self.add(
                        format!("{key}.options.{}.description", option.id),
                        &[],
                        false,
                        at(&format!("/options/{i}")),
                    );
                    // An inline option's own choices sit under it, as their choice paths do
                    // (`asi`, `plus-two`, `ability`).
                    let nested_root = format!("{key}.options.{}.choices", option.id);
                    for (j, nested) in option.choices.iter().enumerate() {
                        self.choice(&nested_root, nested, &|p| {
                            at(&format!("/options/{i}/choices/{j}{p}"))
                        });
                    }
                }
            }
            ChoiceOptions::Source(ChoiceSource::Values { values, .. }) => {
                for value in values {
                    if let Some(value) = value.as_str() {
                        self.add(
                            format!("{key}.options.{value}.name"),
                            &[],
                            false,
                            at("/options"),
                        );
                    }
                }
            }
            ChoiceOptions::Source(_) => {}
        }
    }

    /// An action under `root` (`actions`, `<contentId>.actions`, `types.<type>.actions`) and DA's
    /// keys of it. A `use` of a rules action has the used action's texts, and no keys of its own.
    fn action_at(&mut self, root: &str, action: &Action, at: &dyn Fn(&str) -> Declared) {
        if action.r#use.is_some() {
            return;
        }
        let Some(id) = &action.id else {
            return;
        };
        let key = format!("{root}.{id}");
        self.add(format!("{key}.name"), &[], true, at(""));
        self.add(format!("{key}.description"), &[], false, at(""));
        for (name, param) in action.params.iter() {
            if let ParamEntry::Declared(_) = param {
                self.add(
                    format!("{key}.params.{name}.name"),
                    &[],
                    true,
                    at(&format!("/params/{}", escape(name))),
                );
            }
        }
        for (role, _) in action.participants.iter() {
            self.add(
                format!("{key}.participants.{role}.name"),
                &[],
                false,
                at(&format!("/participants/{}", escape(role))),
            );
        }
        if let Some(Results::List(results)) = &action.results {
            for result in results {
                self.add(
                    format!("{key}.results.{result}.name"),
                    &[],
                    true,
                    at("/results"),
                );
            }
        }
        self.steps(&key, &action.steps, "", at);
    }

    fn steps(&mut self, key: &str, steps: &[Step], pointer: &str, at: &dyn Fn(&str) -> Declared) {
        for (i, step) in steps.iter().enumerate() {
            let here = format!("{pointer}/steps/{i}");
            let asks = matches!(step.kind, StepKind::Choice | StepKind::Allocate);
            self.add(
                format!("{key}.steps.{}.prompt", step.id),
                &[],
                asks,
                at(&here),
            );
            self.add(
                format!("{key}.steps.{}.name", step.id),
                &[],
                false,
                at(&here),
            );
            if let Some(StepOptions::Written(options)) = &step.options {
                for (j, option) in options.iter().enumerate() {
                    self.add(
                        format!("{key}.options.{}.name", option.id),
                        &[],
                        true,
                        at(&format!("{here}/options/{j}")),
                    );
                }
            }
            for (j, case) in step.cases.iter().enumerate() {
                self.steps(key, &case.steps, &format!("{here}/cases/{j}"), at);
            }
            if let Some(otherwise) = &step.r#else {
                self.steps(key, &otherwise.steps, &format!("{here}/else"), at);
            }
        }
    }
}
