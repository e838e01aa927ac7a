//! Every position of the model that holds a reference (`ocf_model::refs`), written with a local ID in
//! one pack: after loading, each one is qualified. The snapshot lists the positions the walk reports
//! over the loaded ruleset, each with what it names; a position the pack writes but the walk misses
//! would be absent from it, one the loader misses would show a bare ID.

use expect_test::expect;
use ocf_load::{LoadOptions, load_ruleset};
use ocf_model::refs::{RefKind, TagRole, Visit, Walk};
use ocf_model::{Change, Id, Keyed, Literal, PackRelease, RulesDocument, Tag};

const PACK: &str = r#"
id: core
version: 1.0.0
specVersion: 1.0.0
rules:
  tags: [skill]
  fields:
    hp: {type: integer}
    name: {type: string}
    favourite: {type: id, of: gear, default: rope, nameFrom: name}
    stat: {type: id, of: field, default: hp}
    kit: {type: set, of: gear, members: [skill]}
    stats: {type: set, of: field}
  contentTypes:
    condition: {}
    gear:
      fields:
        ammo: {type: id, of: gear, default: rope}
      state:
        loaded: {type: id, of: gear, default: rope}
      effects: [{target: hp, op: add, value: 1}]
      grants: [{item: rope}]
      actions: [{use: rest}]
      followUps: [{id: reload, while: 'false', changes: [{type: set, field: hp, value: 1}]}]
  templateFields:
    rune: {type: id, of: gear, default: rope}
  situational:
    flanking: {type: boolean, effects: [{target: {incoming: {fields: [hp]}}, op: add, value: 1}]}
  bands:
    degree: {bands: [{id: hit, when: 'true'}]}
  links:
    crew: {}
  actions:
  - id: rest
    params:
      what: {type: id, of: gear, default: rope}
    results: {bands: degree}
    steps:
    - {id: roll, kind: roll, bands: degree}
    - {id: pick, kind: choice, tags: [skill], options: {content: {type: gear}}}
    - {id: own, kind: choice, options: {copies: {type: gear}}}
    - id: sent
      kind: choice
      options: [{id: loud, to: {link: crew}, changes: [{type: adjust, field: 'core:hp', by: 1}]}]
    - id: change
      kind: changes
      changes:
      - {type: set, field: hp, value: 1}
      - {type: addItem, entry: {item: "'core:rope'", templates: [heavy]}}
      - {type: removeItem, copies: {type: gear}}
    - id: fork
      kind: branch
      cases: [{when: 'true', steps: [{id: inner, kind: action, use: rest, situational: {flanking: 'true'}}]}]
      else: {steps: [{id: other, kind: changes, changes: [{type: set, field: hp, value: 2}]}]}
  choices:
  - id: origin
    options:
    - id: a
      effects: [{target: hp, op: add, value: 1}]
      grants: [{item: rope}]
      choices: [{id: sub, options: {content: {type: gear}}}]
    effects: [{target: hp, op: add, value: 1}]
  constraints:
    light: {check: 'true', copies: {type: gear}}
  followUps:
  - {id: recruit, create: true, while: 'false', link: crew}
  - {id: warn, while: 'false', to: {link: crew}, changes: [{type: adjust, field: 'core:hp', by: 1}]}
  creation: [{id: new, action: rest}]
  displayGroups: [{id: kit, type: gear}]
  fieldHints: [{id: hp, field: hp, group: kit}]
  standardCopies: [{type: gear, where: 'false'}]
  immuneTo: [{id: undead, items: [poisoned], query: {type: condition}}]
  effects:
  - {target: hp, op: add, value: 1}
  - {target: kit, op: grant, value: {item: rope}}
  - {target: kit, op: grant, value: {query: {type: gear}}}
  - {target: stats, op: grant, value: {field: hp}}
  - {target: {choices: [skill]}, op: option, value: {id: shout, to: {link: crew}, changes: [{type: adjust, field: 'core:hp', by: 1}]}}
  - {target: {steps: [skill]}, op: changes, value: {changes: [{type: set, field: hp, value: 1}]}}
content:
- {id: rope, type: gear}
- {id: old, type: gear}
- {id: poisoned, type: condition}
- {id: heavy, type: gear, template: true, fields: {ammo: rope, rune: rope}}
- id: satchel
  extends: rope
  fields: {ammo: rope}
  state: {held: {type: id, of: gear, default: rope}}
  effects: [{target: hp, op: add, value: 1}]
  grants: [{item: rope}]
  choices: [{id: pick, options: {content: {type: gear}}}]
  actions: [{use: rest}]
  standardCopies: [{type: gear, where: 'false'}]
  immuneTo: [{id: wet, items: [poisoned], scope: applied}]
  keepsTemplates: [{template: heavy, copies: {type: gear}}]
  hides: [old]
  followUps: [{id: recruit, create: true, while: 'false', link: crew}]
"#;

/// Lists what the walk reports: `<pointer> <kind> <id>`, or `<pointer> value <literal>`.
#[derive(Default)]
struct Record(Vec<String>);

impl Visit for Record {
    fn reference(&mut self, pointer: &str, kind: RefKind, id: &mut Id) {
        self.0.push(format!("{pointer} {kind:?} {id}"));
    }

    fn item_fields(&mut self, pointer: &str, fields: &mut Keyed<Literal>) {
        for (name, value) in fields.iter() {
            self.0.push(format!("{pointer}/{name} value {value}"));
        }
    }

    fn tag(&mut self, pointer: &str, role: TagRole, tag: &Tag) {
        if role != TagRole::Other {
            self.0.push(format!("{pointer} {role:?} {tag}"));
        }
    }

    fn link_changes(&mut self, pointer: &str, changes: &[Change]) {
        self.0
            .push(format!("{pointer} link changes: {}", changes.len()));
    }
}

#[test]
fn a_local_id_at_every_position_is_qualified() {
    let release: PackRelease = serde_yaml::from_str(PACK).unwrap();
    let mut ruleset = load_ruleset(&[release], &LoadOptions::default()).unwrap();
    let mut out = Vec::new();
    let mut walk = |part: &str, key: &str, f: &mut dyn FnMut(&mut Walk)| {
        let mut record = Record::default();
        f(&mut Walk::new(&mut record));
        out.extend(
            record
                .0
                .into_iter()
                .map(|line| format!("{part} {key}{line}")),
        );
    };
    for (key, d) in ruleset.fields.0.iter_mut() {
        walk("fields", key, &mut |w| w.field(&mut d.decl));
    }
    for (key, d) in ruleset.content_types.0.iter_mut() {
        walk("contentTypes", key, &mut |w| w.content_type(&mut d.decl));
    }
    for (key, d) in ruleset.template_fields.0.iter_mut() {
        walk("templateFields", key, &mut |w| w.item_field(&mut d.decl));
    }
    for (key, d) in ruleset.situational.0.iter_mut() {
        walk("situational", key, &mut |w| w.situational(&mut d.decl));
    }
    for (key, d) in ruleset.actions.0.iter_mut() {
        walk("actions", key, &mut |w| w.action(&mut d.decl));
    }
    for (key, d) in ruleset.choices.0.iter_mut() {
        walk("choices", key, &mut |w| w.choice(&mut d.decl));
    }
    for (key, d) in ruleset.constraints.0.iter_mut() {
        walk("constraints", key, &mut |w| w.constraint(&mut d.decl));
    }
    for (key, d) in ruleset.follow_ups.0.iter_mut() {
        walk("followUps", key, &mut |w| w.follow_up(&mut d.decl));
    }
    for (i, d) in ruleset.standard_copies.iter_mut().enumerate() {
        walk("standardCopies", &i.to_string(), &mut |w| {
            w.standard_copies(&mut d.decl)
        });
    }
    for (i, d) in ruleset.immune_to.iter_mut().enumerate() {
        walk("immuneTo", &i.to_string(), &mut |w| w.immunity(&mut d.decl));
    }
    for (i, d) in ruleset.effects.iter_mut().enumerate() {
        walk("effects", &i.to_string(), &mut |w| {
            w.shared_effect(&mut d.decl)
        });
    }
    for (i, d) in ruleset.creation.iter_mut().enumerate() {
        walk("creation", &i.to_string(), &mut |w| {
            w.creation_start(&mut d.decl)
        });
    }
    for (key, d) in ruleset.display_groups.0.iter_mut() {
        walk("displayGroups", key, &mut |w| w.display_group(&mut d.decl));
    }
    for (key, d) in ruleset.field_hints.0.iter_mut() {
        walk("fieldHints", key, &mut |w| w.field_hint(&mut d.decl));
    }
    for (key, d) in ruleset.content.0.iter_mut() {
        walk("content", key, &mut |w| w.item(&mut d.item));
    }
    // Every reference is qualified, every item field value naming content too.
    for line in &out {
        let id = line.rsplit(' ').next().unwrap();
        let named = !line.contains(" link changes")
            && !line.contains(" ChoiceStep ")
            && !line.contains(" OptionTarget ");
        assert!(!named || id.contains("core:"), "not qualified: {line}");
    }
    expect![[r#"
        fields core:favourite/of ContentType core:gear
        fields core:favourite/default Content core:rope
        fields core:favourite/nameFrom Field core:name
        fields core:stat/default Field core:hp
        fields core:kit/of ContentType core:gear
        contentTypes core:gear/fields/ammo/of ContentType core:gear
        contentTypes core:gear/fields/ammo/default Content core:rope
        contentTypes core:gear/state/loaded/of ContentType core:gear
        contentTypes core:gear/state/loaded/default Content core:rope
        contentTypes core:gear/effects/0/target Field core:hp
        contentTypes core:gear/grants/0/item Content core:rope
        contentTypes core:gear/actions/0/use Action core:rest
        contentTypes core:gear/followUps/0/changes/0/field Field core:hp
        templateFields rune/of ContentType core:gear
        templateFields rune/default Content core:rope
        situational core:flanking/effects/0/target/incoming/fields/0 Field core:hp
        actions core:rest/params/what/of ContentType core:gear
        actions core:rest/params/what/default Content core:rope
        actions core:rest/steps/0/bands BandSet core:degree
        actions core:rest/steps/1/tags/0 ChoiceStep skill
        actions core:rest/steps/1/options/content/type ContentType core:gear
        actions core:rest/steps/2/options/copies/type ContentType core:gear
        actions core:rest/steps/3/options/0/to/link LinkSlot core:crew
        actions core:rest/steps/3/options/0/changes link changes: 1
        actions core:rest/steps/4/changes/0/field Field core:hp
        actions core:rest/steps/4/changes/1/entry/templates/0 Content core:heavy
        actions core:rest/steps/4/changes/2/copies/type ContentType core:gear
        actions core:rest/steps/5/cases/0/steps/0/use Action core:rest
        actions core:rest/steps/5/cases/0/steps/0/situational/core:flanking Situational core:flanking
        actions core:rest/steps/5/else/steps/0/changes/0/field Field core:hp
        actions core:rest/results/bands BandSet core:degree
        choices core:origin/options/0/effects/0/target Field core:hp
        choices core:origin/options/0/grants/0/item Content core:rope
        choices core:origin/options/0/choices/0/options/content/type ContentType core:gear
        choices core:origin/effects/0/target Field core:hp
        constraints core:light/copies/type ContentType core:gear
        followUps core:recruit/link LinkSlot core:crew
        followUps core:warn/to/link LinkSlot core:crew
        followUps core:warn/changes link changes: 1
        standardCopies 0/type ContentType core:gear
        immuneTo 0/items/0 Content core:poisoned
        immuneTo 0/query/type ContentType core:condition
        effects 0/target Field core:hp
        effects 1/target Field core:kit
        effects 1/value/item Content core:rope
        effects 2/target Field core:kit
        effects 2/value/query/type ContentType core:gear
        effects 3/target Field core:stats
        effects 3/value/field Field core:hp
        effects 4/target/choices/0 OptionTarget skill
        effects 4/value/to/link LinkSlot core:crew
        effects 4/value/changes link changes: 1
        effects 5/value/changes/0/field Field core:hp
        creation 0/action Action core:rest
        displayGroups kit/type ContentType core:gear
        fieldHints hp/field Field core:hp
        content core:rope/type ContentType core:gear
        content core:old/type ContentType core:gear
        content core:poisoned/type ContentType core:condition
        content core:heavy/type ContentType core:gear
        content core:heavy/fields/ammo value "core:rope"
        content core:heavy/fields/rune value "core:rope"
        content core:satchel/type ContentType core:gear
        content core:satchel/extends Content core:rope
        content core:satchel/fields/ammo value "core:rope"
        content core:satchel/state/held/of ContentType core:gear
        content core:satchel/state/held/default Content core:rope
        content core:satchel/effects/0/target Field core:hp
        content core:satchel/grants/0/item Content core:rope
        content core:satchel/choices/0/options/content/type ContentType core:gear
        content core:satchel/actions/0/use Action core:rest
        content core:satchel/standardCopies/0/type ContentType core:gear
        content core:satchel/immuneTo/0/items/0 Content core:poisoned
        content core:satchel/keepsTemplates/0/template Content core:heavy
        content core:satchel/keepsTemplates/0/copies/type ContentType core:gear
        content core:satchel/hides/0 Content core:old
        content core:satchel/followUps/0/link LinkSlot core:crew"#]]
    .assert_eq(&out.join("\n"));
}

/// Renames the `target`-th reference the walk reports to `nope`, and counts them.
struct Rename {
    target: usize,
    seen: usize,
    renamed: Option<String>,
}

impl Visit for Rename {
    fn reference(&mut self, pointer: &str, kind: RefKind, id: &mut Id) {
        if self.seen == self.target {
            self.renamed = Some(format!("{pointer} {kind:?} {id}"));
            *id = Id::from("nope");
        }
        self.seen += 1;
    }

    /// The pack's item fields all name content.
    fn item_fields(&mut self, pointer: &str, fields: &mut Keyed<Literal>) {
        for (name, value) in fields.0.iter_mut() {
            self.value(&format!("{pointer}/{name}"), RefKind::Content, value);
        }
    }
}

/// The walk over a pack as written: the rules document's parts, then the items.
fn walk_release(release: &mut PackRelease, visit: &mut dyn Visit) {
    let mut walk = Walk::new(visit);
    let RulesDocument {
        fields,
        content_types,
        template_fields,
        situational,
        actions,
        choices,
        constraints,
        creation,
        follow_ups,
        display_groups,
        field_hints,
        standard_copies,
        immune_to,
        effects,
        ..
    } = &mut release.rules;
    fields.0.values_mut().for_each(|d| walk.field(d));
    content_types
        .0
        .values_mut()
        .for_each(|d| walk.content_type(d));
    template_fields
        .0
        .values_mut()
        .for_each(|d| walk.item_field(d));
    situational.0.values_mut().for_each(|d| walk.situational(d));
    actions.iter_mut().for_each(|d| walk.action(d));
    choices.iter_mut().for_each(|d| walk.choice(d));
    constraints.0.values_mut().for_each(|d| walk.constraint(d));
    creation.iter_mut().for_each(|d| walk.creation_start(d));
    follow_ups.iter_mut().for_each(|d| walk.follow_up(d));
    display_groups
        .iter_mut()
        .for_each(|d| walk.display_group(d));
    field_hints.iter_mut().for_each(|d| walk.field_hint(d));
    standard_copies
        .iter_mut()
        .for_each(|d| walk.standard_copies(d));
    immune_to.iter_mut().for_each(|d| walk.immunity(d));
    effects.iter_mut().for_each(|d| walk.shared_effect(d));
    release.content.iter_mut().for_each(|item| walk.item(item));
}

/// EC step 3: "Every reference in a pack resolves in that pack, then its dependencies, nearest first
/// (`unknown-reference` if nothing matches)": a reference renamed to an ID nothing declares, at each
/// position in turn, fails the load with `unknown-reference` naming it.
#[test]
fn an_unknown_id_at_every_position_is_unknown_reference() {
    let written: PackRelease = serde_yaml::from_str(PACK).unwrap();
    let mut target = 0;
    loop {
        let mut release = written.clone();
        let mut rename = Rename {
            target,
            seen: 0,
            renamed: None,
        };
        walk_release(&mut release, &mut rename);
        let Some(renamed) = rename.renamed else {
            break;
        };
        let errors = load_ruleset(&[release], &LoadOptions::default())
            .expect_err(&format!("loads with {renamed} renamed"));
        let reported = errors
            .iter()
            .any(|e| e.code == "unknown-reference" && e.data.get("id") == Some(&"nope".into()));
        assert!(reported, "{renamed} renamed: {errors:#?}");
        target += 1;
    }
    assert!(target > 60, "{target} positions");
}
