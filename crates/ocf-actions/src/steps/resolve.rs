//! Resolving a change of a changes step (EA "Other steps", changes; DA "Typed damage", "Computed
//! fields and forEach"): its formulas evaluated and written back as literals, fields and content
//! qualified, tags evaluated, a `split` adjust one change per damage type, a follow-up's and an
//! entry's references made whole; and held changes released. [`super::changes`] runs the step.

use crate::context::{ActionContext, member};
use crate::error::ActionError;
use crate::run::literal_text;
use crate::run::{Frame, Run, StepAt, eval_tags};
use ocf_formula::{Root, Value};
use ocf_model::{Change, Namespace};
use serde_json::{Map, Value as Json, json};

/// A change with `forEach` once per element (`x` bound), each whose `when` holds, resolved.
pub(crate) fn resolve_each(
    run: &Run<'_, '_>,
    frame: &Frame<'_>,
    ctx: &ActionContext<'_>,
    change: &Change,
) -> Result<Vec<Json>, ActionError> {
    let elements: Vec<Option<Value>> = match &change.for_each {
        None => vec![None],
        Some(f) => match ctx.eval(f.as_str())? {
            Value::List(l) => l.iter().cloned().map(Some).collect(),
            other => {
                return Err(ActionError::new(
                    "type-mismatch",
                    format!("forEach gives a {}, not a list", other.type_name()),
                ));
            }
        },
    };
    let mut out = Vec::new();
    for x in elements {
        let mut c = ctx.rebound();
        if let Some(x) = x {
            c.bind(Root::X, x);
        }
        if let Some(when) = &change.when
            && !c.condition(when.as_str())?
        {
            continue;
        }
        out.extend(resolve(run, frame, &c, change)?);
    }
    Ok(out)
}

/// A value written back into a change as a formula literal: numbers and booleans as JSON, a
/// string quoted, a list as a list literal, a dice value in dice notation.
pub fn literal_json(value: &Value) -> Result<Json, ActionError> {
    Ok(match value {
        Value::Int(_) | Value::Decimal(_) | Value::Bool(_) | Value::Null => value.to_json(),
        other => Json::String(literal_text(other)?),
    })
}

fn string_value(ctx: &ActionContext<'_>, formula: &str) -> Result<String, ActionError> {
    match ctx.eval(formula)? {
        Value::String(s) if !s.is_empty() => Ok(s.to_string()),
        other => Err(ActionError::new(
            "type-mismatch",
            format!("`{formula}` gives a {}, not a string", other.type_name()),
        )),
    }
}

/// Whether a formula reads `self`, `item` or `batch`: then a change aimed at copies or applied
/// entries passes it on for applyChanges to evaluate per copy.
fn reads_receiver(formula: &str) -> bool {
    let Ok(f) = ocf_formula::Formula::parse(formula) else {
        return false;
    };
    let text = format!("{:?}", f.lowered());
    text.contains("Root(SelfCopy)") || text.contains("Root(Item)") || text.contains("Root(Batch)")
}

fn qualify_content(
    run: &Run<'_, '_>,
    pack: &str,
    id: &str,
    template: bool,
) -> Result<String, ActionError> {
    let qualified = run
        .ruleset
        .resolve(pack, id, Namespace::Content)
        .or_else(|| run.ruleset.item(id).map(|_| id.to_owned()));
    let unknown =
        || ActionError::new("unknown-reference", format!("no content `{id}`")).with("id", id);
    let q = qualified.ok_or_else(unknown)?;
    let entry = run.ruleset.item(&q).ok_or_else(unknown)?;
    // A template is content with `template: true` (it may have a type too).
    let is_template = entry.item.template == Some(true);
    if is_template != template {
        return Err(unknown());
    }
    Ok(q)
}

/// One change resolved: the written change with each formula it takes evaluated now.
pub(crate) fn resolve(
    run: &Run<'_, '_>,
    frame: &Frame<'_>,
    ctx: &ActionContext<'_>,
    change: &Change,
) -> Result<Vec<Json>, ActionError> {
    let Json::Object(mut out) = serde_json::to_value(change).unwrap_or_default() else {
        return Ok(Vec::new());
    };
    out.remove("when");
    out.remove("forEach");
    let pack = frame.pack;
    let by_query = change.copies.is_some() || change.applied.is_some();
    // Fields: qualified against the action's pack; a computed one must name an input field.
    if let Some(field) = &change.field {
        let (text, computed) = match field {
            ocf_model::Computed::Literal(id) => (id.as_str().to_owned(), false),
            ocf_model::Computed::Formula { formula } => {
                (string_value(ctx, formula.as_str())?, true)
            }
        };
        let qualified = run
            .ruleset
            .resolve(pack, &text, Namespace::Field)
            .or_else(|| run.ruleset.fields.get(&text).map(|_| text.clone()));
        let qualified = match qualified {
            Some(q) => q,
            None if !computed => text.clone(),
            None => {
                return Err(
                    ActionError::new("unknown-field", format!("no field `{text}`"))
                        .with("field", text),
                );
            }
        };
        if computed
            && let Some(decl) = run.ruleset.fields.get(&qualified)
            && decl.decl.formula.is_some()
        {
            return Err(
                ActionError::new("not-input-field", format!("`{qualified}` is computed"))
                    .with("field", qualified),
            );
        }
        out.insert("field".into(), json!(qualified));
    }
    for key in ["value", "by"] {
        let formula = match key {
            "value" => &change.value,
            _ => &change.by,
        };
        if let Some(f) = formula {
            if change.split.is_some() && key == "by" {
                continue;
            }
            if by_query && reads_receiver(f.as_str()) {
                out.insert(
                    key.into(),
                    json!(super::substitute::substitute(ctx, f.as_str())?),
                );
                continue;
            }
            out.insert(key.into(), literal_json(&ctx.eval(f.as_str())?)?);
        }
    }
    if !change.tags.is_empty() {
        let mut tags = Vec::new();
        eval_tags(ctx, run.ruleset, &change.tags, &mut tags)?;
        out.insert("tags".into(), json!(tags));
    }
    if let Some(entry) = &change.entry {
        out.insert("entry".into(), resolve_entry(run, frame, ctx, entry)?);
    }
    if let Some(copies) = &change.copies {
        let ty = run
            .ruleset
            .resolve(pack, copies.r#type.as_str(), Namespace::ContentType)
            .unwrap_or_else(|| copies.r#type.as_str().to_owned());
        if let Some(Json::Object(q)) = out.get_mut("copies") {
            q.insert("type".into(), json!(ty));
            if let Some(w) = &copies.r#where {
                q.insert(
                    "where".into(),
                    json!(super::substitute::substitute(ctx, w.as_str())?),
                );
            }
        }
    }
    if let Some(applied) = &change.applied
        && let Some(Json::Object(q)) = out.get_mut("applied")
    {
        q.insert(
            "where".into(),
            json!(super::substitute::substitute(
                ctx,
                applied.r#where.as_str()
            )?),
        );
    }
    if let Some(source) = &change.source {
        let id = string_value(ctx, source.as_str())?;
        // applyChanges reads `source` as a formula: the qualified ID as a string literal.
        let id = qualify_content(run, pack, &id, false)?;
        out.insert("source".into(), literal_json(&Value::string(id.as_str()))?);
    }
    if let Some(active) = &change.active {
        out.insert("active".into(), bool_json(ctx, active.as_str())?);
    }
    if let Some(equipped) = &change.equipped {
        out.insert("equipped".into(), bool_json(ctx, equipped.as_str())?);
    }
    if !change.state.is_empty() {
        let mut state = Map::new();
        for (k, f) in change.state.iter() {
            state.insert(k.to_owned(), literal_json(&ctx.eval(f.as_str())?)?);
        }
        out.insert("state".into(), Json::Object(state));
    }
    if let Some(template) = &change.template {
        let id = string_value(ctx, template.as_str())?;
        // applyChanges reads `template` as a formula, as `source`.
        let id = qualify_content(run, pack, &id, true)?;
        out.insert(
            "template".into(),
            literal_json(&Value::string(id.as_str()))?,
        );
    }
    if let Some(path) = &change.path {
        let mut p = Map::new();
        if let Some(entry) = &path.entry {
            p.insert("entry".into(), resolve_entry(run, frame, ctx, entry)?);
        }
        let segments = match &path.choice {
            ocf_model::ChoicePathSegments::Literal(s) => json!(s),
            ocf_model::ChoicePathSegments::Formula(f) => match ctx.eval(f.as_str())? {
                Value::List(l) if l.iter().all(|v| matches!(v, Value::String(_))) => {
                    Json::Array(l.iter().map(Value::to_json).collect())
                }
                other => {
                    return Err(ActionError::new(
                        "type-mismatch",
                        format!(
                            "a choice path is a list of strings, not a {}",
                            other.type_name()
                        ),
                    ));
                }
            },
        };
        p.insert("choice".into(), segments);
        out.insert("path".into(), Json::Object(p));
    }
    if let Some(option) = &change.option {
        out.insert("option".into(), literal_json(&ctx.eval(option.as_str())?)?);
    }
    if !change.params.is_empty() {
        let mut params = Map::new();
        for (k, f) in change.params.iter() {
            let v = ctx.eval(f.as_str())?;
            if v != Value::Null {
                params.insert(k.to_owned(), crate::run::data_json(&v));
            }
        }
        out.insert("params".into(), Json::Object(params));
    }
    if let Some(follow_up) = &change.follow_up {
        let (qualified, source) = resolve_follow_up(run, frame, ctx, follow_up.as_str())?;
        out.insert("followUp".into(), json!(qualified));
        match source {
            Some(s) => out.insert("source".into(), json!(s)),
            None => out.remove("source"),
        };
    }
    // `pick: self` names the pick that activated the action's content: "the returned change
    // carries its path and option" (DA, "The action's own pick"). Outside picked content it is
    // passed on as written, and the receiver fails it (`schema-error` at `/pick`).
    if change.pick.as_deref() == Some("self")
        && change.path.is_none()
        && let Some(pick) = &frame.pick
    {
        out.extend(pick.clone());
    }
    let Some(split) = &change.split else {
        return Ok(vec![Json::Object(out)]);
    };
    // A split adjust: one change per tag under `by` among the roll's items, then one for the
    // items with none; `by` evaluated per group with `part.total` and `part.tag`.
    let roll = member(&frame.steps, &split.roll);
    let items: &[Value] = match roll.and_then(|r| member(r, "items")) {
        Some(Value::List(l)) => l,
        _ => &[],
    };
    let mut groups: Vec<(Option<&str>, i64)> = Vec::new();
    for item in items {
        let value = match member(item, "value") {
            Some(Value::Int(n)) => *n,
            _ => 0,
        };
        let tag = match member(item, "tags") {
            Some(Value::List(tags)) => tags.iter().find_map(|t| match t {
                Value::String(s)
                    if s.as_ref() != split.by && ocf_model::tag_matches(&split.by, s) =>
                {
                    Some(&**s)
                }
                _ => None,
            }),
            _ => None,
        };
        match groups.iter_mut().find(|(t, _)| *t == tag) {
            Some((_, sum)) => *sum += value,
            None => groups.push((tag, value)),
        }
    }
    // The untagged group goes last.
    groups.sort_by_key(|(t, _)| t.is_none());
    let by = change.by.as_ref().map_or("part.total", |f| f.as_str());
    out.remove("split");
    let mut changes = Vec::with_capacity(groups.len());
    let last = groups.len().saturating_sub(1);
    for (i, (tag, total)) in groups.into_iter().enumerate() {
        let mut c = ctx.rebound();
        c.bind(
            Root::Part,
            Value::map([
                ("total", Value::Int(total)),
                ("tag", tag.map(Value::string).unwrap_or(Value::Null)),
            ]),
        );
        // The last group takes the change as resolved; the others a copy.
        let mut one = match i == last {
            true => std::mem::take(&mut out),
            false => out.clone(),
        };
        one.insert("by".into(), literal_json(&c.eval(by)?)?);
        if let Some(tag) = tag {
            match one.get_mut("tags") {
                Some(Json::Array(tags)) => {
                    if !tags.iter().any(|t| t.as_str() == Some(tag)) {
                        tags.push(json!(tag));
                    }
                }
                _ => {
                    one.insert("tags".into(), json!([tag]));
                }
            }
        }
        changes.push(Json::Object(one));
    }
    Ok(changes)
}

/// An `offerFollowUp`'s follow-up (EA "Other steps", changes): one the content declares (or its
/// content type) whose added option or added changes propose it, else the content defining the
/// action's, else the rules' (a local ID qualified against the action's pack). The qualified ID
/// (`<item>#<id>`, `<type>#<id>`, `<pack>:<id>`) and, for content's, the content as source. One
/// the owner doesn't declare, or a derived one (`while`), is `unknown-reference`.
fn resolve_follow_up(
    run: &Run<'_, '_>,
    frame: &Frame<'_>,
    ctx: &ActionContext<'_>,
    written: &str,
) -> Result<(String, Option<String>), ActionError> {
    let unknown = || {
        ActionError::new(
            "unknown-reference",
            format!("no follow-up `{written}` to offer"),
        )
        .with("followUp", written)
    };
    let ruleset = run.ruleset;
    let derived = |f: &ocf_model::FollowUp| f.r#while.is_some();
    // A written `<owner>#<id>` names its owner outright.
    if let Some((owner, local)) = written.rsplit_once('#') {
        let owner_q = ruleset
            .resolve(frame.pack, owner, Namespace::Content)
            .or_else(|| ruleset.item(owner).map(|_| owner.to_owned()));
        if let Some(q) = owner_q
            && let Some(entry) = ruleset.item(&q)
        {
            let f = entry.item.follow_ups.iter().find(|f| f.id == local);
            return match f {
                Some(f) if !derived(f) => Ok((format!("{q}#{local}"), Some(q))),
                _ => Err(unknown()),
            };
        }
        let ty = ruleset
            .resolve(frame.pack, owner, Namespace::ContentType)
            .unwrap_or_else(|| owner.to_owned());
        let f = ruleset
            .content_types
            .get(&ty)
            .and_then(|t| t.decl.follow_ups.iter().find(|f| f.id == local));
        return match f {
            Some(f) if !derived(f) => Ok((format!("{ty}#{local}"), None)),
            _ => Err(unknown()),
        };
    }
    // The content whose added option or changes propose it (the context's `item`), then the
    // content defining the action: each its own follow-ups, then its type's.
    let mut owners: Vec<String> = Vec::new();
    for key in [ctx.sheet.bindings.item, frame.item].into_iter().flatten() {
        let content = key.content(run.db).clone();
        if !owners.contains(&content) {
            owners.push(content);
        }
    }
    for owner in &owners {
        let Some(entry) = ruleset.item(owner) else {
            continue;
        };
        if let Some(f) = entry.item.follow_ups.iter().find(|f| f.id == written) {
            if derived(f) {
                return Err(unknown());
            }
            return Ok((format!("{owner}#{written}"), Some(owner.clone())));
        }
        if let Some(ty) = entry.type_name() {
            let ty = ruleset
                .resolve(entry.pack_of("type"), ty, Namespace::ContentType)
                .unwrap_or_else(|| ty.to_owned());
            if let Some(f) = ruleset
                .content_types
                .get(&ty)
                .and_then(|t| t.decl.follow_ups.iter().find(|f| f.id == written))
            {
                if derived(f) {
                    return Err(unknown());
                }
                return Ok((format!("{ty}#{written}"), Some(owner.clone())));
            }
        }
    }
    // The rules: qualified as written, else against the action's pack.
    let qualified = if ruleset.follow_ups.get(written).is_some() {
        written.to_owned()
    } else {
        format!("{}:{written}", frame.pack)
    };
    match ruleset.follow_ups.get(&qualified) {
        Some(f) if !derived(&f.decl) => Ok((qualified, None)),
        _ => Err(unknown()),
    }
}

fn bool_json(ctx: &ActionContext<'_>, formula: &str) -> Result<Json, ActionError> {
    match ctx.eval(formula)? {
        Value::Bool(b) => Ok(json!(b)),
        other => Err(ActionError::new(
            "type-mismatch",
            format!("`{formula}` gives a {}, not a boolean", other.type_name()),
        )),
    }
}

fn resolve_entry(
    run: &Run<'_, '_>,
    frame: &Frame<'_>,
    ctx: &ActionContext<'_>,
    entry: &ocf_model::EntryRef,
) -> Result<Json, ActionError> {
    Ok(match entry {
        ocf_model::EntryRef::Named(name) if name == "self" => match &ctx.content_entry {
            Some(entry) => json!(entry),
            None => json!(frame.entry),
        },
        ocf_model::EntryRef::Named(name) if name == "picked" => match ctx.sheet_root_picked() {
            Some(id) => json!(id),
            None => json!(name),
        },
        ocf_model::EntryRef::Named(name) => json!(name),
        ocf_model::EntryRef::Formula { formula } => json!(string_value(ctx, formula.as_str())?),
        ocf_model::EntryRef::New(new) => {
            let mut m = Map::new();
            if let Some(id) = &new.id {
                m.insert("id".into(), json!(id));
            }
            let item = string_value(ctx, new.item.as_str())?;
            // applyChanges reads `item` as a formula: the ID is written as a string literal.
            let item = qualify_content(run, frame.pack, &item, false)?;
            m.insert(
                "item".into(),
                json!(literal_text(&Value::string(item.as_str()))?),
            );
            if let Some(q) = &new.quantity {
                m.insert("quantity".into(), ctx.eval(q.as_str())?.to_json());
            }
            if let Some(e) = &new.equipped {
                m.insert("equipped".into(), bool_json(ctx, e.as_str())?);
            }
            if !new.state.is_empty() {
                let mut state = Map::new();
                for (k, f) in new.state.iter() {
                    state.insert(k.to_owned(), crate::run::data_json(&ctx.eval(f.as_str())?));
                }
                m.insert("state".into(), Json::Object(state));
            }
            if !new.templates.is_empty() {
                let templates: Vec<String> = new
                    .templates
                    .iter()
                    .map(|t| {
                        run.ruleset
                            .resolve(frame.pack, t.as_str(), Namespace::Content)
                            .unwrap_or_else(|| t.as_str().to_owned())
                    })
                    .collect();
                m.insert("templates".into(), json!(templates));
            }
            if !new.choices.is_empty() {
                m.insert("choices".into(), new_picks(ctx, &new.choices)?);
            }
            Json::Object(m)
        }
    })
}

/// A new copy's picks with each `{ formula }` option evaluated now, as the change's other
/// formulas are (EA "Other steps", changes): the returned change holds the option itself.
fn new_picks(
    ctx: &ActionContext<'_>,
    choices: &ocf_model::Keyed<Vec<ocf_model::NewPick>>,
) -> Result<Json, ActionError> {
    let mut out = Map::new();
    for (key, picks) in choices.iter() {
        let mut list = Vec::new();
        for pick in picks {
            let mut p = Map::new();
            let option = match &pick.option {
                ocf_model::Computed::Literal(v) => v.clone(),
                ocf_model::Computed::Formula { formula } => {
                    crate::run::data_json(&ctx.eval(formula.as_str())?)
                }
            };
            p.insert("option".into(), option);
            if !pick.choices.is_empty() {
                p.insert("choices".into(), new_picks(ctx, &pick.choices)?);
            }
            list.push(Json::Object(p));
        }
        out.insert(key.to_owned(), Json::Array(list));
    }
    Ok(Json::Object(out))
}

/// Releases held changes (`release`): each named step's, in order, those `where` holds for.
pub(crate) fn release_held<'db>(
    run: &mut Run<'db, '_>,
    frame: &mut Frame<'db>,
    at: &StepAt<'db>,
    release: &ocf_model::Release,
) -> Result<(), ActionError> {
    let mut released: Vec<Json> = Vec::new();
    for id in &release.steps {
        let Some(pos) = frame.held.iter().position(|(s, _)| s == id) else {
            continue;
        };
        let list = std::mem::take(&mut frame.held[pos].1);
        let mut kept = Vec::new();
        for held in list {
            let take = match &release.r#where {
                None => true,
                Some(w) => {
                    let mut record = held.get("change").cloned().unwrap_or_default();
                    if let Json::Object(m) = &mut record {
                        m.entry("tags").or_insert(json!([]));
                    }
                    let mut ctx = run.ctx(frame, Some(at));
                    ctx.bind(Root::Change, Value::from_json(&record).unwrap_or_default());
                    ctx.condition(w.as_str())?
                }
            };
            if take {
                released.push(held);
            } else {
                kept.push(held);
            }
        }
        frame.held[pos].1 = kept;
    }
    if release.combine == Some(true) {
        released = combine(released);
    }
    run.proposed.extend(released);
    Ok(())
}

/// Merges released numeric adjusts equal in everything but `by` into the first.
fn combine(changes: Vec<Json>) -> Vec<Json> {
    let key = |c: &Json| {
        let mut c = c.clone();
        if let Some(Json::Object(inner)) = c.get_mut("change") {
            if inner.get("type").and_then(Json::as_str) != Some("adjust")
                || !inner.get("by").is_some_and(Json::is_number)
            {
                return None;
            }
            inner.remove("by");
        }
        if let Json::Object(m) = &mut c {
            m.remove("step");
        }
        Some(c)
    };
    let mut out: Vec<Json> = Vec::new();
    let mut keys: Vec<Option<Json>> = Vec::new();
    for c in changes {
        let k = key(&c);
        if let Some(k) = &k
            && let Some(i) = keys.iter().position(|x| x.as_ref() == Some(k))
        {
            let add = c["change"]["by"].as_f64().unwrap_or(0.0);
            let sum = out[i]["change"]["by"].as_f64().unwrap_or(0.0) + add;
            let rounded = (sum * 1e6).round() / 1e6;
            out[i]["change"]["by"] = if rounded.fract() == 0.0 {
                json!(rounded as i64)
            } else {
                json!(rounded)
            };
            continue;
        }
        keys.push(k);
        out.push(c);
    }
    out
}
