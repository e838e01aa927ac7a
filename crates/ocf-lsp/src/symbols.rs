//! What one file declares and what it names: field IDs, content IDs, content types, tags,
//! actions, situational choices (and the other named things of the rules), each at its span.
//! Declarations come from the tolerant YAML index (a half-typed file still declares what it has);
//! references from the build's own walk over the typed document ([`ocf_load::build::walk`]), so
//! the places a reference can stand are the build's, plus the field reads inside each formula.

use ocf_load::build::source::Role;
use ocf_load::build::walk::{self, RefKind, Uses};
use ocf_model::RulesDocument;
use rustc_hash::FxHashMap;

use crate::yaml::{NodeKind, SourceMap, Span, YamlIndex, unescape};

/// What a name names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    Field,
    Content,
    ContentType,
    Tag,
    Action,
    Situational,
    BandSet,
    LinkSlot,
    FollowUp,
    Creation,
}

impl Kind {
    pub fn noun(self) -> &'static str {
        match self {
            Kind::Field => "field",
            Kind::Content => "content item",
            Kind::ContentType => "content type",
            Kind::Tag => "tag",
            Kind::Action => "rules action",
            Kind::Situational => "situational choice",
            Kind::BandSet => "band set",
            Kind::LinkSlot => "link slot",
            Kind::FollowUp => "follow-up",
            Kind::Creation => "creation start",
        }
    }

    fn of(kind: RefKind) -> Kind {
        match kind {
            RefKind::Content => Kind::Content,
            RefKind::ContentType => Kind::ContentType,
            RefKind::Field => Kind::Field,
            RefKind::Action => Kind::Action,
            RefKind::BandSet => Kind::BandSet,
            RefKind::Situational => Kind::Situational,
            RefKind::LinkSlot => Kind::LinkSlot,
            RefKind::CreationStart => Kind::Creation,
            RefKind::FollowUp => Kind::FollowUp,
            RefKind::UsedAction => Kind::Action,
        }
    }
}

/// A declaration: the local ID, where its name is written, and the pointer of what it declares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decl {
    pub kind: Kind,
    pub id: String,
    pub span: Span,
    pub pointer: String,
}

/// A use of a name, as written (possibly `pack:local`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ref {
    pub kind: Kind,
    pub id: String,
    pub span: Span,
}

/// A formula of the file: its pointer, text, and where its text starts when written as is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FormulaSite {
    pub pointer: String,
    pub text: String,
    pub span: Span,
    pub text_start: Option<usize>,
    /// Where each byte of the formula is in the text, however the scalar is written.
    pub map: Option<SourceMap>,
    /// The context roots bound where the formula is (loadRuleset's checker's), when known.
    pub roots: Option<Vec<ocf_formula::Root>>,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FileSymbols {
    pub decls: Vec<Decl>,
    pub refs: Vec<Ref>,
    pub formulas: Vec<FormulaSite>,
}

/// The typed document, when the file reads as its role's type.
pub enum Typed<'a> {
    Rules(&'a RulesDocument),
    Content(&'a [ocf_model::ContentItem], bool),
}

pub fn collect(role: Role, index: &YamlIndex, typed: Option<Typed<'_>>) -> FileSymbols {
    let mut out = FileSymbols::default();
    declarations(role, index, &mut out.decls);
    let uses = match typed {
        Some(Typed::Rules(doc)) => walk::rules(doc),
        Some(Typed::Content(items, listed)) => walk::content(items, listed),
        None => Uses::default(),
    };
    let span_of = |pointer: &str| index.get(pointer).map(|n| n.span);
    let roots = typed.as_ref().map(roots_by_pointer).unwrap_or_default();
    for used in &uses.refs {
        if let Some(span) = span_of(&used.pointer) {
            out.refs.push(Ref {
                kind: Kind::of(used.kind),
                id: used.id.clone(),
                span: name_span(index, &used.pointer, &used.id).unwrap_or(span),
            });
        }
    }
    for used in &uses.tags {
        if let Some(span) = span_of(&used.pointer) {
            out.refs.push(Ref {
                kind: Kind::Tag,
                id: used.tag.clone(),
                span,
            });
        }
    }
    for used in &uses.formulas {
        let Some(node) = index.get(&used.pointer) else {
            continue;
        };
        let same = node.scalar.as_deref() == Some(&used.text);
        let site = FormulaSite {
            pointer: used.pointer.clone(),
            text: used.text.clone(),
            span: node.span,
            text_start: node.text_start.filter(|_| same),
            map: node.map.clone().filter(|_| same),
            roots: roots.get(&used.pointer).map(|r| r.to_vec()),
        };
        field_reads(&site, &mut out.refs);
        out.formulas.push(site);
    }
    out
}

/// Where each formula of the document is and the roots bound there, as loadRuleset's checker
/// finds them ([`ocf_load::formulas::collect`]), on a release holding just this document.
fn roots_by_pointer(typed: &Typed<'_>) -> FxHashMap<String, &'static [ocf_formula::Root]> {
    let mut release = ocf_model::PackRelease {
        id: "file".into(),
        version: "0.0.0".into(),
        spec_version: "1.0.0".into(),
        dependencies: ocf_model::Keyed::default(),
        rules: RulesDocument::default(),
        content: Vec::new(),
        default_locale: None,
        texts: Default::default(),
    };
    let listed = match typed {
        Typed::Rules(doc) => {
            release.rules = (*doc).clone();
            false
        }
        Typed::Content(items, listed) => {
            release.content = items.to_vec();
            *listed
        }
    };
    ocf_load::formulas::collect(&release)
        .into_iter()
        .map(|found| {
            let pointer = match found.document {
                ocf_load::formulas::Document::Content(i) if listed => {
                    format!("/{i}{}", found.pointer)
                }
                _ => found.pointer,
            };
            (pointer, found.roots)
        })
        .collect()
}

/// The span of the ID inside a scalar that holds it as is.
fn name_span(index: &YamlIndex, pointer: &str, id: &str) -> Option<Span> {
    let node = index.get(pointer)?;
    let map = node.map.as_ref()?;
    let at = node.scalar.as_deref()?.find(id)?;
    Some(map.span(at, at + id.len()))
}

impl FormulaSite {
    /// The text span of the formula's bytes `a..b`; the whole node when the formula could not
    /// be found in the text.
    pub fn span_of(&self, a: usize, b: usize) -> Span {
        match &self.map {
            Some(map) => map.span(a, b.min(self.text.len())),
            None => self.span,
        }
    }

    /// Where the formula's text is in the file, when it could be found.
    pub fn text_span(&self) -> Option<Span> {
        let map = self.map.as_ref()?;
        Some(Span {
            start: map.to_text(0),
            end: map.to_text(self.text.len()),
        })
    }

    /// How many bytes of the formula are before the text offset (clamped to a character
    /// boundary), when the offset is inside the formula's text.
    pub fn value_offset(&self, offset: usize) -> Option<usize> {
        let span = self.text_span()?;
        if offset < span.start || offset > span.end {
            return None;
        }
        let at = self.map.as_ref()?.to_value(offset, self.text.len());
        Some(crate::text::floor_boundary(&self.text, at))
    }
}

/// Each field a formula reads, and each situational choice it reads (`situational.<id>`), at its
/// place inside the formula when the text is as is.
fn field_reads(site: &FormulaSite, refs: &mut Vec<Ref>) {
    use ocf_formula::lowered::Expr;
    let Ok(formula) = ocf_formula::Formula::parse(&site.text) else {
        return;
    };
    let lowered = formula.lowered();
    let place = |start: usize, end: usize| site.span_of(start, end);
    for (id, expr) in lowered.exprs.iter() {
        let range = lowered.range(id);
        let (start, end) = (
            u32::from(range.start()) as usize,
            u32::from(range.end()) as usize,
        );
        match expr {
            Expr::Field(name) => refs.push(Ref {
                kind: Kind::Field,
                id: name.to_string(),
                span: place(start, end),
            }),
            Expr::Member { base, name }
                if matches!(
                    lowered.exprs[*base],
                    Expr::Root(ocf_formula::Root::Situational)
                ) && end >= name.len() =>
            {
                refs.push(Ref {
                    kind: Kind::Situational,
                    id: name.to_string(),
                    span: place(end - name.len(), end),
                })
            }
            _ => {}
        }
    }
}

/// What the file declares, by where its nodes are.
fn declarations(role: Role, index: &YamlIndex, out: &mut Vec<Decl>) {
    for node in &index.nodes {
        let segments: Vec<String> = node.pointer.split('/').skip(1).map(unescape).collect();
        let segs: Vec<&str> = segments.iter().map(String::as_str).collect();
        let keyed = |kind: Kind| {
            node.key.as_ref().map(|(span, key)| Decl {
                kind,
                id: key.clone(),
                span: *span,
                pointer: node.pointer.clone(),
            })
        };
        let scalar = |kind: Kind, pointer: String| {
            (node.kind == NodeKind::Scalar)
                .then(|| node.scalar.clone())
                .flatten()
                .map(|id| Decl {
                    kind,
                    id,
                    span: node.span,
                    pointer,
                })
        };
        let parent = || {
            node.pointer
                .rsplit_once('/')
                .map_or(String::new(), |(p, _)| p.to_owned())
        };
        let decl = match (role, segs.as_slice()) {
            (Role::Rules, ["fields", _]) => keyed(Kind::Field),
            (Role::Rules, ["contentTypes", _]) => keyed(Kind::ContentType),
            (Role::Rules, ["situational", _]) => keyed(Kind::Situational),
            (Role::Rules, ["bands", _]) => keyed(Kind::BandSet),
            (Role::Rules, ["links", _]) => keyed(Kind::LinkSlot),
            (Role::Rules, ["tags", _]) => scalar(Kind::Tag, node.pointer.clone()),
            (Role::Rules, ["actions", _, "id"]) => scalar(Kind::Action, parent()),
            (Role::Rules, ["followUps", _, "id"]) => scalar(Kind::FollowUp, parent()),
            (Role::Rules, ["creation", _, "id"]) => scalar(Kind::Creation, parent()),
            (Role::Content, ["id"]) => scalar(Kind::Content, String::new()),
            (Role::Content, [i, "id"]) if i.parse::<usize>().is_ok() => {
                scalar(Kind::Content, parent())
            }
            _ => None,
        };
        out.extend(decl);
    }
}
