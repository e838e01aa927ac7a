// The live sheet. It knows no game: what it shows comes from the character's sheet (computeSheet's
// output), the packs' texts (names, prompts, results, in the reader's locale) and their display hints
// (which fields, in which groups, shown how). It subscribes to the character's changes (server-sent
// events) and re-renders only the rows and parts an event names. Every write names the revision it
// was made against; a stale one (409) brings the page up to date and makes the edit again.
"use strict";

const state = {
  id: null, revision: 0, sheet: null, inputs: {}, events: null, file: null, me: null,
  info: null, hints: [], hintOf: new Map(), rows: new Map(), characters: [], editing: false,
  // This page's asks of other characters' players waiting for their answer (by key), and the
  // asks other characters' actions made of this one (by asker and key).
  asked: new Map(), asks: new Map(), askRolling: null,
};
const $ = (selector, root = document) => root.querySelector(selector);
const el = (tag, props = {}, ...children) => {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (key in node && typeof value !== "string") node[key] = value;
    else node.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children.flat()) if (child !== null && child !== undefined) node.append(child);
  return node;
};

function status(text, error) {
  const element = $("#status");
  element.textContent = text;
  element.className = error ? "error" : "";
}

// ---------------------------------------------------------------------------------------------
// Calls. A write's body is JSON with its content type (the service refuses any other), the session
// cookie goes with it (same origin), and the browser adds the `Origin` the service checks.
async function call(method, path, body) {
  const response = await fetch(path, {
    method,
    headers: body ? { "content-type": "application/json" } : {},
    body: body ? JSON.stringify(body) : undefined,
    credentials: "same-origin",
  });
  const json = await response.json();
  if (response.status === 401 && path !== "/api/login") showLogin();
  if (!response.ok) {
    const errors = json.errors || [];
    const error = new Error(errors.map(worded).join("; ") || `HTTP ${response.status}`);
    error.status = response.status;
    error.errors = errors;
    throw error;
  }
  return json;
}
const api = (id, rest = "") => `/api/characters/${encodeURIComponent(id)}${rest}`;

// ---------------------------------------------------------------------------------------------
// Texts: ICU MessageFormat as the packs write it (arguments, number, plural, selectordinal with
// `=N`, offset and `#`, select, ICU's apostrophe quoting), plural cases by the browser's CLDR rules.
function numberText(n) {
  if (typeof n !== "number") return String(n);
  return String(Math.round(n * 1e6) / 1e6);
}

function formatMessage(message, args, locale) {
  let i = 0;
  const ws = () => { while (i < message.length && /\s/.test(message[i])) i++; };
  const word = () => { ws(); const s = i; while (i < message.length && !/[\s,{}]/.test(message[i])) i++; return message.slice(s, i); };
  function text(depth, hash) {
    let out = "";
    while (i < message.length) {
      const c = message[i];
      if (c === "'") {
        const next = message[i + 1];
        if (next === "'") { out += "'"; i += 2; continue; }
        if (next === "{" || next === "}" || (hash !== undefined && next === "#")) {
          let end = i + 1, quoted = "";
          while (end < message.length) {
            if (message[end] === "'" && message[end + 1] === "'") { quoted += "'"; end += 2; continue; }
            if (message[end] === "'") break;
            quoted += message[end++];
          }
          out += quoted; i = end + 1; continue;
        }
        out += "'"; i++; continue;
      }
      if (c === "{") { i++; out += argument(hash); continue; }
      if (c === "}") { if (depth > 0) return out; out += c; i++; continue; }
      if (c === "#" && hash !== undefined) { out += numberText(hash); i++; continue; }
      out += c; i++;
    }
    return out;
  }
  function argument(hash) {
    const name = word(); ws();
    const value = args ? args[name] : undefined;
    const plain = value === undefined ? `{${name}}` : typeof value === "number" ? numberText(value) : String(value);
    if (message[i] === "}") { i++; return plain; }
    i++;
    const type = word(); ws();
    if (message[i] === "}") { i++; return plain; }
    i++;
    if (type === "number") {
      const style = word(); ws(); i++;
      if (typeof value !== "number") return plain;
      if (style === "percent") return `${numberText(value * 100)}%`;
      if (style === "integer") return String(Math.round(value));
      return numberText(value);
    }
    let offset = 0;
    const cases = {};
    for (;;) {
      ws();
      if (i >= message.length) break;
      if (message[i] === "}") { i++; break; }
      const key = word();
      if (key.startsWith("offset:")) { offset = Number(key.slice(7)) || 0; continue; }
      ws();
      if (message[i] !== "{") break;
      i++;
      const n = typeof value === "number" ? value - offset : undefined;
      cases[key] = text(1, type === "select" ? hash : n);
      i++;
    }
    if (type === "select") return cases[String(value)] ?? cases.other ?? plain;
    if (typeof value !== "number") return cases.other ?? plain;
    if (cases[`=${numberText(value)}`] !== undefined) return cases[`=${numberText(value)}`];
    let category = "other";
    try {
      category = new Intl.PluralRules(locale, { type: type === "selectordinal" ? "ordinal" : "cardinal" }).select(value - offset);
    } catch (_) { /* an unknown locale: `other` */ }
    return cases[category] ?? cases.other ?? plain;
  }
  try { return text(0, undefined); } catch (_) { return message; }
}

function t(key, args) {
  const message = state.info && state.info.texts[key];
  if (message === undefined) return null;
  return formatMessage(message, args || {}, state.info.locale);
}

// A readable form of an ID when no text has it, as the engine's fallback words it.
const GENERIC = new Set(["score", "mod", "modifier", "total", "value", "bonus", "max", "current", "proficiency", "rating", "base", "temp"]);
function humanize(id) {
  const local = id.includes(":") ? id.slice(id.indexOf(":") + 1) : id;
  const parts = local.split(/[.#]/).filter(Boolean);
  let picked = parts.slice(-1);
  if (parts.length > 1 && GENERIC.has(parts[parts.length - 1])) picked = parts.slice(-2);
  const words = picked.join(" ").replace(/([a-z])([A-Z])/g, "$1 $2").replace(/[-_]/g, " ").toLowerCase();
  return words.charAt(0).toUpperCase() + words.slice(1);
}
const split = (id) => {
  const at = id.indexOf(":");
  return at < 0 ? ["", id] : [id.slice(0, at), id.slice(at + 1)];
};
const qualified = (pack, key) => (pack ? `${pack}:${key}` : key);
function fieldName(field) {
  const [pack, local] = split(field);
  return t(qualified(pack, `fields.${local}.name`)) ?? humanize(field);
}
function itemName(item) {
  return t(`${item}.name`, { count: 1 }) ?? humanize(item);
}
function tagName(pack, tag) {
  return t(qualified(pack, `tags.${tag}.name`)) ?? humanize(tag);
}
// An action's text root: `<pack>:actions.<id>` for a rules action, `<item>.actions.<id>` for an
// item's own.
function actionRoot(id) {
  if (id.includes("#")) { const [item, own] = id.split("#"); return `${item}.actions.${own}`; }
  const [pack, local] = split(id);
  return qualified(pack, `actions.${local}`);
}
function actionName(id) { return t(`${actionRoot(id)}.name`) ?? humanize(id); }
function worded(entry, root = "errors") {
  const text = t(`${root}.${entry.code}`, entry.data || {}) ?? entry.message ?? entry.code;
  return text;
}

// An ID as a formula's string literal (changes take formulas: `choose`'s option, `applyEffect`'s
// source).
const quote = (id) => `'${String(id).replace(/\\/g, "\\\\").replace(/'/g, "\\'")}'`;

// ---------------------------------------------------------------------------------------------
// Values as the hints show them.
function valueOf(field) {
  const value = state.sheet.values[field];
  if (!value || value.error) return undefined;
  return value.value;
}
function isDefault(value) {
  if (value === null || value === undefined) return true;
  if (typeof value === "boolean") return !value;
  if (typeof value === "number") return value === 0;
  if (typeof value === "string") return value === "" || value === "0";
  if (Array.isArray(value)) return value.length === 0;
  if (typeof value === "object") return Object.keys(value).length === 0;
  return false;
}
function maxOf(hint) {
  if (hint.max !== undefined) return hint.max;
  const field = state.info.fields[hint.field];
  return field && typeof field.max === "number" ? field.max : undefined;
}
function textValue(value, field) {
  if (typeof value !== "string") return plain(value);
  if (value.includes(":")) return itemName(value);
  const [pack] = split(field);
  return t(qualified(pack, `tags.${value}.name`)) ?? humanize(value);
}
function plain(value) {
  if (value === null || value === undefined) return "—";
  if (typeof value === "number") return numberText(value);
  if (typeof value === "boolean") return value ? "yes" : "no";
  if (typeof value === "object") return JSON.stringify(value);
  return String(value);
}
const MAX_MARKS = 100;
// The value's node: text for numbers, dots, boxes, tracks and clocks with words for screen readers.
function shown(hint, value, of) {
  const show = hint.show || (typeof value === "boolean" ? "box" : typeof value === "string" || Array.isArray(value) ? "text" : "number");
  const n = typeof value === "number" ? value : undefined;
  const max = maxOf(hint);
  if (show === "modifier" && n !== undefined) return el("span", { class: "value", text: n < 0 ? `−${numberText(-n)}` : `+${numberText(n)}` });
  if (show === "dots" && n !== undefined) {
    const total = Math.min(MAX_MARKS, Math.max(max ?? n, n, 0));
    const filled = Math.min(MAX_MARKS, Math.max(0, n));
    return el("span", { class: "value dots", role: "img", "aria-label": `${numberText(n)} of ${numberText(total)}`, text: "●".repeat(filled) + "○".repeat(Math.max(0, total - filled)) });
  }
  if (show === "track" && n !== undefined) {
    const length = Math.min(MAX_MARKS, Math.max(typeof of === "number" ? of : max ?? n, n, 0));
    const filled = Math.min(MAX_MARKS, Math.max(0, n));
    return el("span", { class: "value track", role: "img", "aria-label": `${numberText(n)} of ${numberText(length)}` },
      el("span", { "aria-hidden": "true", text: "■".repeat(filled) + "□".repeat(Math.max(0, length - filled)) + " " }),
      el("span", { "aria-hidden": "true", text: `${numberText(n)}/${numberText(length)}` }));
  }
  if (show === "clock" && n !== undefined) {
    const total = typeof of === "number" ? of : max ?? Math.max(n, 1);
    const angle = total > 0 ? Math.min(1, n / total) * 360 : 0;
    return el("span", { class: "value", role: "img", "aria-label": `clock ${numberText(n)} of ${numberText(total)}` },
      el("span", { class: "clock", style: `background: conic-gradient(#1f2933 ${angle}deg, #fff 0)` }),
      ` ${numberText(n)}/${numberText(total)}`);
  }
  if (show === "box" || typeof value === "boolean") {
    return el("span", { class: "value", role: "img", "aria-label": value ? "yes" : "no", text: value ? "☑" : "☐" });
  }
  if (show === "text") {
    const text = Array.isArray(value) ? value.map((v) => textValue(v, hint.field)).join(", ") : textValue(value, hint.field);
    return el("span", { class: "value", text });
  }
  if (n !== undefined) {
    const ofText = of === undefined ? "" : ` / ${plain(of)}`;
    return el("span", { class: "value", text: numberText(n) + ofText });
  }
  return el("span", { class: "value", text: plain(value) });
}

function breakdown(field) {
  const value = state.sheet.values[field];
  if (!value) return "";
  const parts = [`${plain(value.base)} saved`];
  for (const step of value.breakdown || []) {
    const source = step.source ? sourceName(step.source) : "";
    const op = step.op === "add" ? (step.value < 0 ? "" : "+") : `${step.op} `;
    parts.push(`${op}${plain(step.value)}${source ? ` ${source}` : ""}`);
  }
  return parts.join(", ");
}
function sourceName(source) {
  if (!source) return "";
  if (source.type === "rules") return "";
  if (source.entry) {
    const activation = (state.sheet.activations || []).find((a) => a.entry === source.entry && a.via === "copy");
    if (activation && source.id && source.id !== activation.item) return `${itemName(source.id)}`;
    if (activation) return itemName(activation.item);
  }
  return source.id ? itemName(source.id) : "";
}

// ---------------------------------------------------------------------------------------------
// The sheet: identity, headline, groups, each row rendered by itself so a change redraws only it.
function rowId(field, where = "row") {
  return `${where}-${field.replace(/[^A-Za-z0-9_-]/g, "_")}`;
}

function loadHints() {
  const info = state.info;
  const hints = Object.entries(info.fieldHints || {}).map(([id, h], index) => ({ ...(h.decl || h), hintId: id, pack: h.declaredIn || h.pack, index }));
  hints.sort((a, b) => (a.order ?? Infinity) - (b.order ?? Infinity) || a.index - b.index);
  state.hints = hints;
  state.hintOf = new Map(hints.map((h) => [h.field, h]));
  state.oddsHints = Object.entries(info.oddsHints || {}).map(([id, h]) => ({ ...(h.decl || h), hintId: id, pack: h.declaredIn || h.pack }));
  state.groups = Object.entries(info.displayGroups || {}).map(([id, g], index) => ({ ...(g.decl || g), groupId: id, pack: g.declaredIn || g.pack, index }))
    .sort((a, b) => (a.order ?? Infinity) - (b.order ?? Infinity) || a.index - b.index);
}

// Where each field is drawn: field ID → the render functions to run again when it changes.
function watch(field, redraw) {
  if (!field) return;
  if (!state.rows.has(field)) state.rows.set(field, new Set());
  state.rows.get(field).add(redraw);
}

function renderSheet() {
  state.rows = new Map();
  renderIdentity();
  if (titleHint()) watch(titleHint().field, renderIdentity);
  renderHeadline();
  const root = $("#sheet");
  root.replaceChildren();
  if (!state.hints.length) renderFallback(root);
  else for (const group of state.groups) root.append(renderGroup(group));
  renderStates();
  renderActions();
  renderChoices();
  renderIssues();
  renderCompeting();
  renderInventory();
}

// The character's name: the field a hint marks `title`, when it is not blank; else the file's ID.
function titleHint() { return state.hints.find((h) => h.title); }
function renderIdentity() {
  const hint = titleHint();
  const named = hint && valueOf(hint.field);
  const name = typeof named === "string" && named.trim() ? named.trim()
    : state.id ? state.id.charAt(0).toUpperCase() + state.id.slice(1) : "";
  $("#character-name").textContent = name;
  document.title = `${name} · ocf sheet`;
  renamed(typeof named === "string" && named.trim() ? named.trim() : null);
  // The name's box, drawn again only when its saved value changed (a pushed sheet leaves it be).
  const box = $("#character-name-edit");
  const base = hint && state.sheet.values[hint.field] ? JSON.stringify(state.sheet.values[hint.field].base ?? null) : "";
  if (!hint || !state.inputs[hint.field]) box.replaceChildren();
  else if (box.dataset.base !== base || !box.children.length) {
    box.dataset.base = base;
    box.replaceChildren(editor(hint.field, hint));
  }
  const parts = [];
  for (const group of state.groups || []) {
    if (!group.headline || !group.type) continue;
    for (const member of members(group)) parts.push(member);
  }
  $("#character-summary").textContent = parts.join(" · ");
}

// A content group's members: the holder activations of its type, by their items' names; a copy
// whose state holds one number (a class's level) shows it after its name.
function members(group, detailed) {
  const out = [];
  const seen = new Set();
  for (const activation of state.sheet.activations || []) {
    if (activation.scope === "applied" || !activation.item) continue;
    if (state.info.items[activation.item] !== group.type) continue;
    let name = itemName(activation.item);
    const entry = activation.via === "copy" && activation.entry && fileEntry(activation.entry);
    let number = null;
    if (entry && entry.state) {
      const numbers = Object.entries(entry.state).filter(([, v]) => typeof v === "number");
      if (numbers.length === 1) { name += ` ${numberText(numbers[0][1])}`; number = { key: numbers[0][0], value: numbers[0][1] }; }
    }
    if (!seen.has(name)) { seen.add(name); out.push(detailed ? { name, entry: entry && entry.id, item: activation.item, number } : name); }
  }
  return out;
}

// A member with one number (a class's level) in a headline group: raised by one with adjustState
// (a level up); what it opens comes up as pending choices.
function memberRow(group, member) {
  const li = el("li", {}, el("span", { text: member.name }));
  if (group.headline && member.number && member.entry) {
    const refusal = el("p", { class: "refusal", role: "alert" });
    const label = `+1 ${member.name} (to ${numberText(member.number.value + 1)})`;
    li.append(" ", el("button", { type: "button", "data-raise": member.entry, text: "+1", "aria-label": label, title: label,
      onclick: async () => {
        const done = await write(() => ({ method: "POST", path: api(state.id, "/changes"),
          body: { changes: [{ type: "adjustState", entry: member.entry, key: member.number.key, by: 1 }] } }), refusal);
        if (done) startGuide(`Level up: ${itemName(member.item)} ${numberText(member.number.value + 1)}`);
      } }), refusal);
  }
  return li;
}

// A headline content group whose members count levels (classes): another of its type added
// (multiclassing), an addItem; what it opens is then made through the guided flow.
function addMember(group, title) {
  const held = new Set((state.sheet.activations || []).map((a) => a.item));
  const [pack, local] = split(group.type);
  const typeName = t(qualified(pack, `types.${local}.name`), { count: 1 }) ?? humanize(group.type);
  const choices = Object.entries(state.info.items || {}).filter(([id, type]) => type === group.type && !held.has(id))
    .map(([id]) => [itemName(id), id]).sort((a, b) => a[0].localeCompare(b[0]));
  const refusal = el("p", { class: "refusal", role: "alert" });
  const pick = el("select", { "aria-label": `${title}: another ${typeName.toLowerCase()}` }, choices.map(([name, id]) => el("option", { value: id, text: name })));
  const add = el("button", { type: "button", "data-add-member": group.groupId, text: `Add ${typeName.toLowerCase()}`, onclick: async () => {
    const id = pick.value;
    // The state the group's hint gives a member added beside those held (a second class:
    // level 1, not the starting class); else it counts from 1 under the key its fellows count by.
    const counted = members(group, true).find((m) => m.number);
    const entry = { item: quote(id) };
    const given = Object.entries(group.addState || {});
    if (given.length) entry.state = Object.fromEntries(given.map(([key, value]) => [key, typeof value === "string" ? value : JSON.stringify(value)]));
    else if (counted) entry.state = { [counted.number.key]: "1" };
    const done = await write(() => ({ method: "POST", path: api(state.id, "/changes"),
      body: { changes: [{ type: "addItem", entry }] } }), refusal);
    if (done) startGuide(`New ${typeName.toLowerCase()}: ${itemName(id)}`);
  } });
  return el("div", { class: "inline add-member" }, pick, add, refusal);
}
function fileEntry(id) {
  const file = state.file;
  if (!file) return null;
  return [...(file.features || []), ...(file.inventory || [])].find((e) => e.id === id) || null;
}

function renderHeadline() {
  const root = $("#headline");
  root.replaceChildren();
  for (const hint of state.hints.filter((h) => h.headline)) {
    const draw = () => {
      const value = valueOf(hint.field);
      const of = hint.of ? valueOf(hint.of) : undefined;
      const old = document.getElementById(rowId(hint.field, "stat"));
      const card = el("div", { class: "stat", id: rowId(hint.field, "stat"), "data-field": hint.field });
      const hiddenDefault = hint.hidden === "whenDefault" && isDefault(value);
      card.hidden = value === undefined || hint.hidden === "always" || hiddenDefault;
      if (hiddenDefault && state.inputs[hint.field]) card.dataset.whenDefault = "yes";
      card.append(el("span", { class: "label", id: rowId(hint.field, "label"), text: fieldName(hint.field) }));
      if (value !== undefined) card.append(shown(hint, value, of));
      if (hint.of && state.inputs[hint.field] && typeof value === "number") {
        card.classList.add("wide");
        card.append(adjuster(hint));
      } else if (state.inputs[hint.field]) {
        card.append(editor(hint.field, hint));
      }
      card.title = breakdown(hint.field);
      if (old) old.replaceWith(card); else root.append(card);
      return card;
    };
    draw();
    watch(hint.field, draw);
    watch(hint.of, draw);
  }
}

// Lower or raise a current value that has a maximum (hit points, stress): an adjust through
// applyChanges, so incoming-change effects apply (resistances); lowering is tagged `damage` with
// its type where the ruleset has damage tags.
function adjuster(hint) {
  const name = fieldName(hint.field);
  const damageTags = (state.info.tags || []).filter((tag) => tag.startsWith("damage.") && tag.split(".").length === 2);
  const amount = el("input", { type: "number", min: "0", value: "1", "aria-label": `Amount for ${name}`, inputmode: "numeric" });
  const [pack] = split(hint.field);
  const type = damageTags.length ? el("select", { "aria-label": "Damage type" },
    damageTags.map((tag) => el("option", { value: tag, text: tagName(pack, tag) }))) : null;
  const refusal = el("p", { class: "refusal", role: "alert" });
  const go = async (sign) => {
    const by = Number(amount.value);
    if (!(by > 0)) { refusal.textContent = "Give an amount above 0."; return; }
    const tags = sign < 0 && type ? ["damage", type.value] : [];
    const change = { type: "adjust", field: hint.field, by: String(sign * by) };
    if (tags.length) change.tags = tags;
    await write(() => ({ path: api(state.id, "/changes"), method: "POST", body: { changes: [change] } }), refusal);
  };
  const lower = type ? "Damage" : "−";
  const raise = type ? "Heal" : "+";
  return el("div", { class: "adjust" },
    amount, type,
    el("button", { type: "button", "aria-label": `${lower === "−" ? "Lower" : lower} ${name}`, text: lower, onclick: () => go(-1) }),
    el("button", { type: "button", "aria-label": `${raise === "+" ? "Raise" : raise} ${name}`, text: raise, onclick: () => go(1) }),
    refusal);
}

function renderGroup(group) {
  const section = el("section", { class: "card group", "data-group": group.groupId, "aria-labelledby": rowId(group.groupId, "group") });
  const title = t(qualified(group.pack, `groups.${split(group.groupId)[1] || group.id}.name`)) ?? humanize(group.id);
  section.append(el("h2", { id: rowId(group.groupId, "group"), text: title }));
  if (group.type && group.from === "applied") return appliedGroup(group, section, title);
  if (group.type) {
    const list = el("ul", { class: "members" });
    const adding = el("div");
    const draw = () => {
      const all = members(group, true);
      list.replaceChildren(...all.map((member) => memberRow(group, member)));
      section.hidden = !list.children.length;
      adding.replaceChildren();
      if (group.headline && all.some((m) => m.number)) adding.append(addMember(group, title));
    };
    draw();
    section.append(list, adding);
    section.redrawMembers = draw;
    return section;
  }
  for (const hint of state.hints) {
    if (hint.headline || (hint.group !== group.id && hint.group !== group.groupId)) continue;
    const draw = () => {
      const row = renderRow(hint);
      const old = document.getElementById(rowId(hint.field));
      if (old) { old.replaceWith(row); row.classList.add("changed"); }
      else section.append(row);
      groupVisibility(section);
    };
    draw();
    watch(hint.field, draw);
    watch(hint.of, draw);
    watch(hint.beside, draw);
    watch(hint.spent, draw);
  }
  groupVisibility(section);
  return section;
}
// A group of applied entries (conditions): each with its Remove button (removeEffect), and the
// type's items offered to apply (applyEffect).
function appliedGroup(group, section, title) {
  const list = el("ul", { class: "items" });
  const refusal = el("p", { class: "refusal", role: "alert" });
  const choices = Object.entries(state.info.items || {}).filter(([, type]) => type === group.type)
    .map(([id]) => [itemName(id), id]).sort((a, b) => a[0].localeCompare(b[0]));
  const pick = el("select", { "aria-label": `${title}: add` }, choices.map(([name, id]) => el("option", { value: id, text: name })));
  const add = el("button", { type: "button", text: "Apply", onclick: () => write(() => ({
    method: "POST", path: api(state.id, "/changes"), body: { changes: [{ type: "applyEffect", source: quote(pick.value) }] },
  }), refusal) });
  const draw = () => {
    const applied = ((state.file && state.file.applied) || []).filter((a) => state.info.items[a.source] === group.type);
    list.replaceChildren(...applied.map((entry) => el("li", { "data-applied": entry.id },
      el("span", { class: "item-name", text: itemName(entry.source) }),
      el("button", { type: "button", text: "Remove", "aria-label": `Remove ${itemName(entry.source)}`, onclick: () => write(() => ({
        method: "POST", path: api(state.id, "/changes"), body: { changes: [{ type: "removeEffect", id: entry.id }] },
      }), refusal) }))));
  };
  draw();
  section.redrawMembers = draw;
  section.append(list, el("div", { class: "inline" }, pick, add), refusal);
  return section;
}

function groupVisibility(section) {
  const rows = [...section.querySelectorAll(".row")];
  section.hidden = rows.length > 0 && rows.every((r) => r.hidden) && !(state.editing && rows.some((r) => r.dataset.whenDefault));
}

function renderRow(hint) {
  const field = hint.field;
  const value = valueOf(field);
  const row = el("div", { class: "row", id: rowId(field), "data-field": field });
  const hiddenDefault = hint.hidden === "whenDefault" && isDefault(value);
  row.hidden = value === undefined || hint.hidden === "always" || hiddenDefault;
  if (hiddenDefault && state.inputs[field]) row.dataset.whenDefault = "yes";
  const name = fieldName(field);
  const label = hint.roll
    ? el("button", { type: "button", class: "name", text: name, title: `Roll ${name}`, onclick: () => rollFrom(hint) })
    : el("span", { class: "name", text: name });
  row.append(label);
  const used = hint.spent ? valueOf(hint.spent) : undefined;
  if (value !== undefined && hint.spent && hint.spent !== field && typeof value === "number" && typeof used === "number") {
    // A resource with a separate count of what is spent: what is left of its maximum.
    const left = value - used;
    row.append(el("span", { class: "value", text: `${numberText(left)} / ${numberText(value)}`, title: `${numberText(left)} left of ${numberText(value)}` }));
  } else if (value !== undefined) row.append(shown(hint, value, hint.of ? valueOf(hint.of) : undefined));
  if (value !== undefined && hint.spent && state.inputs[hint.spent]) row.append(spendControls(hint, value, used));
  if (hint.beside) {
    const besideValue = valueOf(hint.beside);
    const besideHint = state.hintOf.get(hint.beside) || { field: hint.beside };
    if (besideValue !== undefined && !(besideHint.hidden === "whenDefault" && isDefault(besideValue))) {
      const node = shown(besideHint, besideValue);
      node.classList.add("beside");
      node.setAttribute("title", fieldName(hint.beside));
      row.append(node);
    }
  }
  if (state.inputs[field]) row.append(editor(field, hint));
  row.title = breakdown(field);
  return row;
}

// A resource's controls: spend one and regain one, through applyChanges on its `spent` field (a
// count raised and lowered by one, or a use's box marked and cleared).
function spendControls(hint, value, used) {
  const name = fieldName(hint.field);
  const refusal = el("p", { class: "refusal", role: "alert" });
  const send = (change) => write(() => ({ method: "POST", path: api(state.id, "/changes"), body: { changes: [change] } }), refusal);
  const box = typeof used === "boolean";
  const left = hint.spent !== hint.field && typeof value === "number" && typeof used === "number" ? value - used : undefined;
  const spend = el("button", { type: "button", class: "spend", text: "Spend", "aria-label": `Spend one: ${name}`,
    disabled: box ? used === true : left !== undefined && left <= 0,
    onclick: () => send(box ? { type: "set", field: hint.spent, value: "true" } : { type: "adjust", field: hint.spent, by: "1" }) });
  const regain = el("button", { type: "button", class: "regain", text: "Regain", "aria-label": `Regain one: ${name}`,
    disabled: box ? used !== true : !(typeof used === "number" && used > 0),
    onclick: () => send(box ? { type: "set", field: hint.spent, value: "false" } : { type: "adjust", field: hint.spent, by: "-1" }) });
  return el("span", { class: "resource" }, spend, regain, refusal);
}

// An input field's box: its saved value (the base effects start from), edited in place; a refusal
// is worded beside it.
function editor(field, hint) {
  const input = state.inputs[field] || {};
  const base = state.sheet.values[field] ? state.sheet.values[field].base : null;
  const label = `${fieldName(field)}, saved value`;
  const wrap = el("span", { class: "edit" });
  let box;
  if (input.type === "boolean") {
    box = el("input", { type: "checkbox", "aria-label": label, checked: base === true });
    box.addEventListener("change", () => edit(field, box.checked, box, refusal));
  } else if (input.values && input.values.length) {
    box = el("select", { "aria-label": label },
      el("option", { value: "", text: "—" }),
      input.values.map((v) => el("option", { value: String(v), text: textValue(v, field), selected: v === base })));
    box.addEventListener("change", () => edit(field, box.value === "" ? null : box.value, box, refusal));
  } else if (input.type === "integer" || input.type === "decimal") {
    box = el("input", { type: "text", inputmode: input.type === "integer" ? "numeric" : "decimal", "aria-label": label, value: base === null || base === undefined ? "" : plain(base), size: "4" });
    box.addEventListener("change", () => {
      const text = box.value.trim();
      const number = Number(text);
      edit(field, text === "" ? null : Number.isNaN(number) ? text : number, box, refusal);
    });
  } else {
    box = el("input", { type: "text", "aria-label": label, value: base === null || base === undefined ? "" : typeof base === "string" ? base : JSON.stringify(base), size: "10" });
    box.addEventListener("change", () => {
      const text = box.value.trim();
      let value = text === "" ? null : text;
      if (text.startsWith("[") || text.startsWith("{")) { try { value = JSON.parse(text); } catch (_) { /* as text */ } }
      edit(field, value, box, refusal);
    });
  }
  box.classList.add("edit-box");
  const refusal = el("p", { class: "refusal", role: "alert", id: rowId(field, "refusal") });
  box.setAttribute("aria-describedby", refusal.id);
  wrap.append(box);
  const holder = document.createDocumentFragment();
  holder.append(wrap, refusal);
  return holder;
}

// The generated characters and packs without hints: every field by its ID, grouped by its first
// segment, as `ocf sheet --ids` lists them.
function renderFallback(root) {
  const groups = new Map();
  for (const field of Object.keys(state.sheet.values || {})) {
    const [pack, local] = split(field);
    const group = `${pack}:${local.split(".")[0]}`;
    if (!groups.has(group)) {
      const section = el("section", { class: "card group fallback", "aria-label": humanize(group) }, el("h2", { text: humanize(group) }));
      groups.set(group, section);
      root.append(section);
    }
    const hint = { field };
    const draw = () => {
      const row = renderRow(hint);
      row.querySelector(".name").textContent = `${fieldName(field)} (${local})`;
      const old = document.getElementById(rowId(field));
      if (old) { old.replaceWith(row); row.classList.add("changed"); } else groups.get(group).append(row);
    };
    draw();
    watch(field, draw);
  }
}

// States that matter at a glance: each hinted box shown only when set (a condition), when set.
function renderStates() {
  const list = $("#states");
  list.replaceChildren();
  for (const hint of state.hints) {
    if (hint.show !== "box" || hint.hidden !== "whenDefault") continue;
    if (valueOf(hint.field) === true) list.append(el("li", { text: fieldName(hint.field) }));
  }
}

// ---------------------------------------------------------------------------------------------
// Writes: each names the revision; a stale one (409) is made again on the fresh sheet, once,
// and a refusal is worded next to the control that made it.
async function write(make, refusal, control) {
  for (let attempt = 0; attempt < 3; attempt++) {
    const { method, path, body } = make();
    try {
      const answer = await call(method, path, { ...body, revision: state.revision });
      if (refusal) refusal.textContent = "";
      if (control) control.removeAttribute("aria-invalid");
      // The answer's changes are the event's: drawn now unless the event came first.
      if (answer.changes && answer.revision > state.revision) applyChanged({ ...answer.changes, revision: answer.revision });
      else refreshFile();
      return answer;
    } catch (error) {
      if (error.status === 409 && attempt < 2) {
        status("The sheet changed elsewhere: brought up to date, making the edit again…");
        await open(state.id, true);
        continue;
      }
      const words = error.errors && error.errors.length ? error.errors.map((e) => worded(e)).join(" ") : error.message;
      if (refusal) refusal.textContent = words;
      if (control) control.setAttribute("aria-invalid", "true");
      status(words, true);
      return null;
    }
  }
  return null;
}

async function edit(field, value, box, refusal) {
  state.lastEdit = { field, at: performance.now() };
  await write(() => ({ method: "PUT", path: api(state.id, `/values/${encodeURIComponent(field)}`), body: { value } }), refusal, box);
}

// ---------------------------------------------------------------------------------------------
// Actions and rolls.
function sheetActions() {
  return state.sheet.actions || [];
}
function actionLabel(action) {
  let name = actionName(action.id);
  if (action.entry) {
    const activation = (state.sheet.activations || []).find((a) => a.entry === action.entry && a.via === "copy");
    const item = action.source || (activation && activation.item);
    if (item && !action.id.startsWith(item)) name += ` (${itemName(item)})`;
  }
  return name;
}
function renderActions() {
  const box = $("#actions");
  box.replaceChildren();
  for (const action of sheetActions()) {
    const declared = state.info.actions[action.id];
    // Actions a field's hint rolls are on the sheet already; creation is not a play action.
    if (declared && state.hints.some((h) => h.roll && h.roll.action === action.id)) continue;
    if (isCreation(action.id)) continue;
    box.append(el("button", { type: "button", "data-action": action.id, "data-entry": action.entry || "", text: actionLabel(action), onclick: () => prepare(action) }));
  }
}
function isCreation(id) {
  return (state.info.creation || []).includes(id) || /(^|:)create-/.test(id);
}

// A roll from a field: its hint's action with its parameters filled in.
function rollFrom(hint) {
  const action = { id: hint.roll.action };
  prepare(action, hint.roll.params || {}, fieldName(hint.field));
}

// The form before a roll: what the action still needs (a parameter, a target) and the situation
// (advantage, position and effect); Enter rolls.
function prepare(action, fixed = {}, subject) {
  const declared = state.info.actions[action.id] || { params: {}, participants: {} };
  const fields = $("#roll-fields");
  fields.replaceChildren();
  const root = actionRoot(action.id);
  $("#roll-title").textContent = subject ? `${subject}: ${actionName(action.id)}` : actionLabel(action);
  const controls = [];
  for (const [name, param] of Object.entries(declared.params || {})) {
    if (fixed[name] !== undefined) continue;
    const label = t(`${root}.params.${name}.name`) ?? param.label ?? humanize(name);
    let control;
    if (param.values && param.values.length) {
      control = el("select", { name }, param.optional ? el("option", { value: "", text: "—" }) : null,
        param.values.map((v) => el("option", { value: String(v), text: humanize(String(v)) })));
    } else if (param.type === "boolean") {
      control = el("input", { type: "checkbox", name });
    } else if (param.type === "id" && param.of && param.of !== "field") {
      // A content parameter (a spell): the character's own items of that type, else the type's.
      const type = param.of.includes(":") ? param.of : qualified(split(action.id.split("#")[0])[0], param.of);
      const own = [...new Set((state.sheet.activations || []).filter((a) => a.item && state.info.items[a.item] === type).map((a) => a.item))];
      const ids = own.length ? own : Object.entries(state.info.items || {}).filter(([, ty]) => ty === type).map(([id]) => id);
      const named = ids.map((id) => [itemName(id), id]).sort((a, b) => a[0].localeCompare(b[0]));
      control = el("select", { name }, param.optional ? el("option", { value: "", text: "—" }) : null,
        named.map(([text, id]) => el("option", { value: id, text })));
    } else if (param.type === "id" && param.of === "field") {
      const options = state.hints.filter((h) => h.roll && h.roll.params && Object.values(h.roll.params).length);
      control = el("select", { name }, options.map((h) => el("option", { value: h.field, text: fieldName(h.field) })));
    } else {
      control = el("input", { type: "text", inputmode: param.type === "integer" ? "numeric" : undefined, name, size: "5" });
    }
    control.dataset.kind = param.type;
    control.dataset.optional = param.optional ? "yes" : "";
    controls.push(["param", name, control]);
    const line = el("label", {}, `${label}${param.optional ? " (optional)" : ""} `, control);
    // An optional free-text parameter (an instance ID an app passes) is rarely a player's: it waits
    // under "More options".
    if (param.optional && control.tagName === "INPUT" && control.type === "text" && !["integer", "decimal"].includes(param.type)) {
      let more = fields.querySelector("details.more");
      if (!more) more = el("details", { class: "more" }, el("summary", { text: "More options" }));
      more.append(line);
      fields.append(more);
    } else fields.append(line);
  }
  for (const [role, decl] of Object.entries(declared.participants || {})) {
    const others = state.characters.filter((c) => c.id !== state.id);
    const label = t(`${root}.participants.${role}.name`) ?? humanize(role);
    const control = el("select", { name: role }, el("option", { value: "", text: "None" }),
      others.map((c) => el("option", { value: c.id, text: characterName(c.id) })));
    controls.push(["participant", role, control, decl]);
    fields.append(el("label", {}, `${label} (a stored character) `, control));
  }
  const situational = Object.entries(state.info.situational || {});
  if (situational.length) {
    const set = el("fieldset", {}, el("legend", { text: "Situation" }));
    for (const [id, decl] of situational) {
      const [pack, local] = split(id);
      const label = t(qualified(pack, `situational.${local}.name`)) ?? humanize(id);
      let control;
      if (decl.type === "boolean") control = el("input", { type: "checkbox", name: id, checked: decl.default === true });
      else if (decl.values && decl.values.length) {
        control = el("select", { name: id }, decl.values.map((v) => el("option", {
          value: String(v), selected: v === decl.default,
          text: t(qualified(pack, `situational.${local}.options.${v}.name`)) ?? humanize(String(v)),
        })));
      } else control = el("input", { type: "text", name: id, size: "5", value: decl.default ?? "" });
      controls.push(["situational", id, control, decl]);
      set.append(el("label", {}, control, ` ${label}`));
    }
    fields.append(set);
  }
  const dice = el("input", { type: "checkbox", name: "physical" });
  if (!state.me || state.me.playerDice || state.me.role === "gamemaster") {
    fields.append(el("label", {}, dice, " I roll my own dice"));
  }
  const dialog = $("#roll-dialog");
  const gather = async () => {
    const input = { action: { id: action.id }, subject };
    if (action.entry) input.action.entry = action.entry;
    if (action.source) input.action.source = action.source;
    input.params = { ...fixed };
    const participants = {};
    for (const [kind, name, control, decl] of controls) {
      const raw = control.type === "checkbox" ? control.checked : control.value;
      if (kind === "param") {
        if (raw === "" || raw === null) continue;
        input.params[name] = control.dataset.kind === "integer" || control.dataset.kind === "decimal" ? Number(raw) : raw;
      } else if (kind === "situational") {
        if (raw === "" || raw === decl.default) continue;
        input.situational = input.situational || {};
        input.situational[name] = decl.type === "integer" ? Number(raw) : raw;
      } else if (raw) {
        state.lastTarget = raw;
        participants[name] = [await participantView(raw, decl, action.id)];
      }
    }
    if (Object.keys(participants).length) input.participants = participants;
    if (dice.checked) input.policy = { dice: "pause" };
    return input;
  };
  // The odds before the roll, worked out again as the target or the situation changes.
  const shown = $("#roll-odds");
  shown.replaceChildren();
  let asked = 0;
  const ask = async () => {
    const mine = ++asked;
    try {
      const input = await gather();
      const words = await oddsWords(input);
      if (mine === asked) shown.replaceChildren(...oddsNodes(words, "Odds"));
    } catch (_) { if (mine === asked) shown.replaceChildren(); }
  };
  for (const [, , control] of controls) control.addEventListener("change", ask);
  ask();
  $("#roll-form").onsubmit = async (event) => {
    event.preventDefault();
    $("#roll-card").replaceChildren(el("p", { text: "Rolling…" }));
    const input = await gather();
    dialog.close();
    await start(input);
  };
  $("#roll-cancel").onclick = () => dialog.close();
  if (typeof dialog.showModal === "function") dialog.showModal(); else dialog.setAttribute("open", "");
  const first = fields.querySelector("select, input");
  (first || $("#roll-go")).focus();
}

// A participant's view from its own stored sheet: the fields its role reads.
async function participantView(id, decl, actionId) {
  const sheet = await call("GET", api(id, "/sheet"));
  const [pack] = split(actionId.split("#")[0]);
  const wanted = decl && decl.fields && typeof decl.fields === "object" && !Array.isArray(decl.fields) ? Object.keys(decl.fields)
    : decl ? [] : Object.keys(sheet.sheet.values || {});
  const values = {};
  for (const field of wanted) {
    const full = field.includes(":") ? field : qualified(pack, field);
    const value = sheet.sheet.values[full];
    if (value && !value.error) values[full] = value.value;
  }
  return { id, values, revision: sheet.revision };
}

async function start(input) {
  const card = $("#roll-card");
  // Another roll takes the card: an asked roll left unmade goes back to the list.
  if (!input.asked && state.askRolling) { state.askRolling = null; renderAsks(); }
  card.replaceChildren(el("p", { text: "Rolling…" }));
  try {
    const answer = await call("POST", api(state.id, "/actions"), stripRevisions(input));
    showResult(answer.result, input);
  } catch (error) {
    card.replaceChildren(el("div", { class: "roll" }, el("p", { class: "refusal", text: error.message })));
  }
}
function stripRevisions(input) {
  const copy = JSON.parse(JSON.stringify(input));
  delete copy.subject;
  delete copy.asked;
  for (const views of Object.values(copy.participants || {})) for (const view of views) delete view.revision;
  return copy;
}

// The band set an action's results come from, for the words of a roll's band.
function bandSetOf(actionId) {
  const declared = state.info.actions[actionId];
  const results = declared && declared.results;
  return results && results.bands ? results.bands : null;
}
function bandName(actionId, band) {
  const set = bandSetOf(actionId);
  if (set) {
    const [pack, local] = split(set);
    const name = t(qualified(pack, `bands.${local}.${band}.name`));
    if (name) return name;
  }
  return t(`${actionRoot(actionId)}.results.${band}.name`) ?? humanize(band);
}
const GOOD = new Set(["hit", "critical", "success"]);
const BAD = new Set(["miss", "failure"]);

// A roll another character's action asks of this one (a target's save that pauses for its
// player's dice or choice, pushed as `ask`): made here as any roll, its outcome sent back to the
// asking page (`answered`), whose card then goes on.
// This page's asks waiting for their answers, kept by the browser too (its local storage, the
// newest 16): the paused action's signed state and its card's input, so a reloaded page shows
// the card again, waiting, and the answer the service tells it again goes on with it.
const ASKED = "ocf-asked";
function keptAsks() {
  try { const kept = JSON.parse(localStorage.getItem(ASKED) || "[]"); return Array.isArray(kept) ? kept : []; } catch (_) { return []; }
}
function storeAsks(kept) {
  try { localStorage.setItem(ASKED, JSON.stringify(kept.slice(-16))); } catch (_) { /* full or refused: the card still waits */ }
}
function keepAsk(entry) { storeAsks([...keptAsks().filter((e) => e.key !== entry.key), entry]); }
function dropAsk(from, key) { storeAsks(keptAsks().filter((e) => !(e.from === from && e.key === key))); }
function resumeAsk(id) {
  const entry = keptAsks().filter((e) => e.from === id && e.result && e.input).pop();
  if (entry && !state.asked.has(entry.key)) showResult(entry.result, entry.input, { key: entry.key });
}

// An ask is kept by the service until answered or withdrawn: a page that opens (or reconnects)
// is told every ask kept for its character, so each is known by its asker and key, listed under
// the actions while unanswered, and the first made at once when no other asked roll is under way.
const askId = (ask) => `${ask.from}\n${ask.key}`;
function heardAsk(ask) {
  if (state.asks.has(askId(ask))) return;
  state.asks.set(askId(ask), ask);
  renderAsks();
  if (!state.askRolling) askedRoll(ask);
}
function withdrawnAsk(ask) {
  const id = askId(ask);
  if (!state.asks.delete(id)) return;
  renderAsks();
  if (state.askRolling === id) {
    state.askRolling = null;
    const box = $("#roll-card .roll");
    if (box) box.replaceChildren(el("p", { class: "sent", role: "status", text: `${characterName(ask.from)} withdrew this roll.` }));
  }
}
function renderAsks() {
  const list = $("#asks");
  const waiting = [...state.asks.entries()].filter(([id]) => id !== state.askRolling);
  list.replaceChildren(...(waiting.length ? [el("h3", { text: "Rolls asked of you" })] : []),
    ...waiting.map(([, ask]) => el("p", {}, `${characterName(ask.from)} asks: ${actionName((ask.run || {}).action || "")} `,
      el("button", { type: "button", text: "Make this roll", onclick: () => askedRoll(ask) }))));
}
async function askedRoll(ask) {
  state.askRolling = askId(ask);
  renderAsks();
  const run = ask.run || {};
  const input = { action: { id: run.action }, params: run.params || {}, asked: ask,
    subject: `${characterName(ask.from)} asks` };
  if (run.policy) input.policy = run.policy;
  const participants = {};
  for (const [role, ids] of Object.entries(run.participants || {})) {
    participants[role] = await Promise.all((ids || []).map((id) => participantView(id, null, run.action)));
  }
  if (Object.keys(participants).length) input.participants = participants;
  status(`${characterName(ask.from)} asks for ${actionName(run.action || "")}`);
  await start(input);
  $("#roll-card").scrollIntoView({ block: "nearest" });
}
function answerAsk(ask, outcome) {
  const asker = characterName(ask.from);
  const line = el("p", { class: "sent", role: "status", text: `Sending the outcome to ${asker}…` });
  const done = () => {
    state.asks.delete(askId(ask));
    if (state.askRolling === askId(ask)) state.askRolling = null;
    renderAsks();
  };
  call("POST", api(ask.id || state.id, "/asks/answer"), { to: ask.from, key: ask.key, outcome })
    .then(() => { line.textContent = `Sent to ${asker}.`; done(); })
    .catch((error) => {
      const code = error.errors && error.errors[0] && error.errors[0].code;
      if (code === "unknown-ask") { line.textContent = `Not sent: ${asker} withdrew this roll.`; done(); }
      else if (code === "already-answered") { line.textContent = `Not sent: this roll was answered already (on another page).`; done(); }
      else line.textContent = `Not sent to ${asker}: ${error.message}`;
    });
  return line;
}

// The roll card: each roll's dice and faces, its bonuses by their sources' names, the result in
// words, damage by type, then the proposed changes, each applied with one button to its own
// character; a pause asks its question.
function showResult(result, input, resume) {
  const card = $("#roll-card");
  const actionId = input.action.id;
  const box = el("article", { class: "roll", "aria-label": "Roll result" });
  box.append(el("h3", { text: input.subject ? `${input.subject}: ${actionName(actionId)}` : actionLabel(input.action) }));
  for (const entry of result.log || []) box.append(logEntry(entry, actionId));
  if (result.status === "finished") {
    const outcome = result.outcome || {};
    if (outcome.result !== undefined) {
      const word = bandName(actionId, outcome.result);
      box.append(el("p", { class: `verdict ${GOOD.has(outcome.result) ? "good" : BAD.has(outcome.result) ? "bad" : ""}`, text: word }));
    }
    for (const [key, value] of Object.entries(outcome.data || {})) {
      box.append(el("p", { class: "data", text: `${dataName(actionId, key)}: ${dataValue(actionId, key, value)}` }));
    }
    box.append(proposals(result.proposedChanges || [], input));
    if (input.asked) box.append(answerAsk(input.asked, outcome));
  } else if (result.status === "paused") {
    box.append(question(result, input, resume));
  }
  card.replaceChildren(box);
  odds(input, box);
}

// An outcome's data by the situational choice of the same name in the action's pack (Blades'
// position and effect): its name, a string value by its option's text, a whole number as the
// level it counts to, the choice's listed value at that place (effect 2: Standard); else as
// written (decisions.md, "The web sheet's resources, name and outcome words").
function dataChoice(actionId, key) {
  const [pack] = split(actionId.split("#")[0]);
  const id = qualified(pack, key);
  const decl = (state.info.situational || {})[id];
  return decl ? { id, decl, pack } : null;
}
function dataName(actionId, key) {
  const choice = dataChoice(actionId, key);
  return (choice && t(qualified(choice.pack, `situational.${key}.name`))) ?? humanize(key);
}
function dataValue(actionId, key, value) {
  const choice = dataChoice(actionId, key);
  const values = (choice && choice.decl.values) || [];
  let option = null;
  if (typeof value === "string" && values.includes(value)) option = value;
  else if (Number.isInteger(value) && value >= 0 && value < values.length) option = String(values[value]);
  if (option !== null) return t(qualified(choice.pack, `situational.${key}.options.${option}.name`)) ?? humanize(option);
  return typeof value === "string" ? humanize(value) : plain(value);
}

// A roll item's source by its name: a field's, an item's, a situational choice's.
function itemSource(source) {
  if (!source || !source.id) return "";
  if (source.type === "field") return fieldName(source.id);
  if (source.type === "item" || source.type === "template") return itemName(source.id);
  if (source.type === "situational") {
    const [pack, local] = split(source.id);
    return t(qualified(pack, `situational.${local}.name`)) ?? humanize(source.id);
  }
  if (source.type === "rules") return "";
  return sourceName(source);
}
function logEntry(entry, actionId) {
  const action = entry.action || actionId;
  const root = actionRoot(action);
  const stepId = String(entry.step || "").split("/").pop().replace(/\[\d+\]$/, "");
  const name = t(`${root}.steps.${stepId}.name`) ?? humanize(stepId);
  const section = el("div", { class: "step" });
  const [pack] = split(action);
  if (entry.items || entry.total !== undefined) {
    const line = el("p", { class: "faces" }, el("strong", { text: `${name}: ` }));
    const items = entry.items || [];
    const byType = new Map();
    items.forEach((item, index) => {
      const source = itemSource(item.source);
      if (item.kind === "dice") {
        if (index > 0) line.append(" + ");
        line.append(`${item.count}d${item.sides} `);
        for (const face of item.faces || []) {
          const value = typeof face === "object" ? face.value : face;
          const dropped = typeof face === "object" && face.kept === false;
          line.append(el("span", { class: `die${dropped ? " dropped" : ""}`, title: dropped ? "not kept" : null, text: String(value) }));
        }
        if (source && item.source.type !== "item") line.append(` (${source})`);
      } else {
        const n = Number(item.value);
        line.append(` ${n < 0 ? "−" : "+"} ${numberText(Math.abs(n))}${source ? ` (${source})` : ""}`);
      }
      for (const tag of item.tags || []) {
        if (/^damage\.[A-Za-z]+$/.test(tag)) byType.set(tag, (byType.get(tag) || 0) + Number(item.value || 0));
      }
    });
    if (entry.total !== undefined) line.append(el("strong", { text: ` = ${numberText(entry.total)}` }));
    if (entry.band) line.append(` → ${bandWord(entry.bandSet, entry.band, action)}`);
    section.append(line);
    // Damage by type, when the dice themselves carry a damage type.
    if (items.some((item) => item.kind === "dice" && (item.tags || []).some((tag) => tag.startsWith("damage."))) && byType.size) {
      section.append(el("p", { class: "damage", text: [...byType].map(([tag, total]) => `${numberText(total)} ${tagName(pack, tag).toLowerCase()}`).join(", ") }));
    }
  } else if (entry.kind === "handoff" && entry.outcome) {
    const who = entry.participant && entry.participant.id;
    const result = entry.outcome.result;
    section.append(el("p", { text: `${name}: ${characterName(who)}${result ? ` — ${humanize(result)}` : ""}` }));
  } else if (entry.picked !== undefined) {
    section.append(el("p", { text: `${name}: ${optionName(entry.picked, action, stepId)}` }));
  }
  return section;
}
function bandWord(set, band, actionId) {
  if (set) {
    const [pack, local] = split(set);
    const word = t(qualified(pack, `bands.${local}.${band}.name`));
    if (word) return word;
  }
  return bandName(actionId, band);
}
function optionName(option, actionId, stepId) {
  const id = typeof option === "string" ? option : option && (option.id || option.option);
  if (!id) return plain(option);
  if (id.includes(":")) return itemName(id.split("#")[0]) + (id.includes("#") ? ` (${humanize(id.split("#")[1])})` : "");
  return t(`${actionRoot(actionId)}.options.${id}.name`) ?? t(`${actionRoot(actionId)}.steps.${stepId}.options.${id}.name`) ?? humanize(id);
}

function changeWords(change) {
  const field = typeof change.field === "string" ? change.field : null;
  switch (change.type) {
    case "adjust": {
      const by = Number(change.by);
      const tags = (change.tags || []).filter((tag) => tag.startsWith("damage.")).map((tag) => tagName(split(field || "")[0], tag));
      return `${field ? fieldName(field) : "a value"} ${by < 0 ? "−" : "+"}${numberText(Math.abs(by))}${tags.length ? ` (${tags.join(", ")})` : ""}`;
    }
    case "set": return `${field ? fieldName(field) : "a value"} set to ${plain(change.value)}`;
    case "addItem": return `Add ${itemName(change.entry && change.entry.item || "")}`;
    case "removeItem": return "Remove an item";
    case "setState": case "adjustState": return `${humanize(change.key || "state")} ${change.type === "setState" ? "set to" : "by"} ${plain(change.value ?? change.by)}`;
    case "applyEffect": return `Apply ${itemName(change.source || "")}`;
    case "removeEffect": return "Remove an effect";
    case "adjustQuantity": return `Quantity ${plain(change.by)}`;
    default: return humanize(change.type || "change");
  }
}

// Proposed changes, grouped by the character they go to, each group applied with one button
// through that character's own applyChanges (its resistances apply there).
function proposals(proposed, input) {
  const wrap = el("div", { class: "proposals" });
  if (!proposed.length) return wrap;
  const byCharacter = new Map();
  for (const p of proposed) {
    const who = p.to === "self" || !p.character ? state.id : p.character;
    if (!byCharacter.has(who)) byCharacter.set(who, []);
    byCharacter.get(who).push(p.change);
  }
  for (const [who, changes] of byCharacter) {
    const refusal = el("p", { class: "refusal", role: "alert" });
    const list = el("ul", {}, changes.map((c) => el("li", { text: changeWords(c) })));
    const button = el("button", { type: "button", class: "primary", text: who === state.id ? "Apply to me" : `Apply to ${characterName(who)}` });
    button.addEventListener("click", async () => {
      button.disabled = true;
      const done = who === state.id
        ? await write(() => ({ method: "POST", path: api(state.id, "/changes"), body: { changes } }), refusal)
        : await writeTo(who, changes, refusal);
      if (done) button.textContent = "Applied"; else button.disabled = false;
    });
    wrap.append(el("p", { text: who === state.id ? "For this character:" : `For ${characterName(who)}:` }), list, button, refusal);
  }
  void input;
  return wrap;
}
async function writeTo(id, changes, refusal) {
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const sheet = await call("GET", api(id, "/sheet"));
      const answer = await call("POST", api(id, "/changes"), { revision: sheet.revision, changes });
      refusal.textContent = "";
      return answer;
    } catch (error) {
      if (error.status === 409) continue;
      refusal.textContent = error.errors && error.errors.length ? error.errors.map((e) => worded(e)).join(" ") : error.message;
      return null;
    }
  }
  return null;
}

// A pause: its question in words, its options by name, or the faces of physical dice.
function question(result, input, resume) {
  const needs = result.needs || {};
  const actionId = input.action.id;
  const root = actionRoot(actionId);
  const stepId = String(needs.step || "").split("/").pop().replace(/\[\d+\]$/, "");
  const prompt = t(`${root}.steps.${stepId}.prompt`) ?? needs.prompt ?? t(`pauses.${needs.kind}`) ?? humanize(needs.kind || "choice");
  const form = el("form", { class: "question" });
  const set = el("fieldset", {}, el("legend", { text: prompt }));
  form.append(set);
  const refusal = el("p", { class: "refusal", role: "alert" });
  const go = async (answer) => {
    try {
      const next = await call("POST", api(state.id, "/actions/continue"), { state: result.state, answer });
      showResult(next.result, input);
    } catch (error) {
      refusal.textContent = error.errors && error.errors.length ? error.errors.map((e) => worded(e)).join(" ") : error.message;
    }
  };
  if (needs.kind === "handoff") {
    // A participant's own roll (a target's saving throw): run on its stored character, its
    // outcome given back to this action.
    const who = needs.participant && needs.participant.id;
    const run = needs.run || {};
    const policy = input.policy;
    const name = characterName(who);
    const from = state.id;
    set.append(el("p", { text: `${name} rolls ${actionName(run.action || "")} on their own sheet…` }));
    // When it pauses (a choice, or its player's own dice) it is asked of that player's page
    // (`…/asks`), which the service keeps until it is answered or withdrawn: the page may open
    // later. This card waits and goes on with the answer; the browser keeps it too (`keepAsk`),
    // so this page reloaded shows it waiting again and the answer, told again, still reaches it.
    let key = resume && resume.key;
    const waitFor = (mine) => state.asked.set(mine, (outcome) => {
      // Collected once this card goes on: the service stops telling this page of it.
      call("POST", api(who, "/asks/withdraw"), { from, key: mine }).catch(() => {});
      dropAsk(from, mine);
      set.replaceChildren(set.firstChild, el("p", { class: "waiting", text: `${name} answered.` }));
      go({ outcome });
    });
    const waiting = (watched) => {
      refusal.textContent = "";
      set.replaceChildren(set.firstChild,
        el("p", { class: "waiting", text: watched === false
          ? `Waiting for ${name}'s player: the roll is kept until they open ${name}'s sheet…`
          : `Waiting for ${name}'s player to make this roll on ${name}'s sheet…` }),
        el("button", { type: "button", text: "Withdraw", onclick: withdraw }));
    };
    const ask = async () => {
      key = `${from}-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`;
      const mine = key;
      waitFor(mine);
      try {
        const asked = await call("POST", api(who, "/asks"), { from, key: mine, run: { ...run, participants: run.participants || {}, ...(policy ? { policy } : {}) } });
        if (!state.asked.has(mine)) return;
        keepAsk({ from, key: mine, result, input });
        waiting(asked.watched);
      } catch (error) {
        state.asked.delete(mine);
        refusal.textContent = error.errors && error.errors.length ? error.errors.map((e) => worded(e)).join(" ") : error.message;
        set.replaceChildren(set.firstChild, el("button", { type: "button", text: "Ask again", onclick: ask }));
      }
    };
    const withdraw = async () => {
      try {
        await call("POST", api(who, "/asks/withdraw"), { from, key });
        state.asked.delete(key);
        dropAsk(from, key);
        refusal.textContent = "";
        set.replaceChildren(set.firstChild, el("p", { class: "waiting", text: `Withdrawn: ${name}'s player is no longer asked.` }),
          el("button", { type: "button", text: "Ask again", onclick: ask }));
      } catch (error) {
        const code = error.errors && error.errors[0] && error.errors[0].code;
        if (code === "unknown-ask") { state.asked.delete(key); dropAsk(from, key); }
        refusal.textContent = error.errors && error.errors.length ? error.errors.map((e) => worded(e)).join(" ") : error.message;
      }
    };
    if (key) {
      // The card of an ask made before this page was loaded: waiting as it was.
      waitFor(key);
      waiting();
    } else (async () => {
      try {
        const participants = {};
        for (const [role, ids] of Object.entries(run.participants || {})) {
          participants[role] = await Promise.all((ids || []).map((id) => participantView(id, null, run.action)));
          for (const view of participants[role]) delete view.revision;
        }
        // The actor rolling their own dice asks the same of the target's player.
        const theirs = await call("POST", api(who, "/actions"), { action: { id: run.action }, params: run.params || {}, participants, ...(policy ? { policy } : {}) });
        if (theirs.result.status === "finished") { await go({ outcome: theirs.result.outcome || {} }); return; }
        await ask();
      } catch (error) {
        refusal.textContent = error.errors && error.errors.length ? error.errors.map((e) => worded(e)).join(" ") : error.message;
      }
    })();
  } else if (needs.kind === "dice") {
    // `needs.dice`: each dice item still to roll, `{ item, count, sides }`, faces in that order.
    const wanted = Array.isArray(needs.dice) ? needs.dice : [{ count: needs.count || 1, sides: needs.sides }];
    const boxes = [];
    for (const group of wanted) {
      for (let i = 0; i < (group.count || 1); i++) {
        const box = el("input", { type: "text", inputmode: "numeric", size: "3", required: true,
          "aria-label": `Die ${boxes.length + 1}${group.sides ? ` (d${group.sides})` : ""}` });
        boxes.push(box);
        set.append(box, " ");
      }
    }
    const notation = wanted.map((g) => `${g.count || 1}d${g.sides ?? "?"}`).join(" + ");
    set.prepend(el("p", { text: `${notation}: type the faces you rolled.` }));
    set.append(el("button", { type: "submit", text: "Use these faces" }));
    form.addEventListener("submit", (event) => { event.preventDefault(); go({ faces: boxes.map((b) => Number(b.value)) }); });
    setTimeout(() => boxes[0] && boxes[0].focus(), 0);
  } else {
    const options = needs.options || [];
    for (const option of options) {
      const id = typeof option === "string" ? option : option.id || option.option;
      const label = optionName(option, actionId, stepId) + (option.recommended ? " (recommended)" : "");
      set.append(el("button", { type: "button", text: id === "#done" ? "Done" : label, onclick: () => go({ option: id }) }), " ");
    }
    form.addEventListener("submit", (event) => event.preventDefault());
    setTimeout(() => { const b = set.querySelector("button"); if (b) b.focus(); }, 0);
  }
  form.append(refusal);
  return form;
}

// The odds of an action before any die (issue 45's route): each result's chance by its name, most
// likely first, each participant's own (a target's save), and the mean of each numeric change
// (`65 % Hit · 10 % Critical hit · 25 % Miss · brute's Hit Points −7.1 expected`). `trial`: the
// changes a choice's option would make, for the odds after it. Null when the route gives none.
const percent = (p) => `${Math.round(Number(p) * 1000) / 10} %`;
// The odds in words: the summary the pack's odds hints give, and the details.
async function oddsWords(input, trial) {
  const body = stripRevisions(input);
  delete body.policy;
  if (trial) body.trial = trial;
  const answer = await call("POST", api(state.id, "/odds"), body);
  return { summary: oddsSummary(input, answer.odds), details: oddsParts(input.action.id, answer.odds) };
}
// The odds' lines: the summary first (strong), then the details; nothing when the route gave none.
function oddsNodes(words, label) {
  if (!words || (!words.summary && !words.details.length)) return [];
  const nodes = [`${label}: `];
  if (words.summary) nodes.push(el("strong", { class: "odds-summary", text: words.summary }));
  if (words.details.length) nodes.push(el("span", { class: "odds-details", text: `${words.summary ? " (" : ""}${words.details.join(" · ")}${words.summary ? ")" : ""}` }));
  return nodes;
}
// The parts compared before → after a choice's option: the summary's phrases where the pack
// sums the action up, else the details.
async function oddsPartsFor(input, trial) {
  const words = await oddsWords(input, trial);
  return words.summary ? words.summary.split(" · ") : words.details;
}

// The summary of an action's odds by the pack's odds hints (display-hints.md §4), each phrase
// its text `odds.<id>.name` with `chance` (the hinted results' summed chance), `mean` (the
// hinted field's proposed changes' summed mean, negated for a loss) and `name`: `65 % to hit ·
// 6.0 expected damage`. A hint with a `role` gives one phrase per participant of that role, from
// its own results and the changes to it; several participants' phrases are each led by its
// name. A phrase is left out where none of its results may happen, or no change to its field is
// proposed, or its mean is not above 0. Null when no hint sums the action up.
function oddsSummary(input, odds) {
  if (!odds) return null;
  const hints = (state.oddsHints || []).filter((h) => (h.actions || []).includes(input.action.id));
  const groups = new Map();
  for (const hint of hints) {
    const who = hint.role ? ((input.participants || {})[hint.role] || []).map((v) => v.id) : [null];
    for (const id of who) {
      const args = { name: id ?? "" };
      if (hint.results && hint.results.length) {
        const results = id === null ? odds.results
          : (((odds.participants || {})[hint.role] || []).find((e) => e.id === id) || {}).results;
        if (!results || !hint.results.some((r) => Number(results[r]) > 0)) continue;
        args.chance = percent(hint.results.reduce((sum, r) => sum + Number(results[r] || 0), 0));
      }
      if (hint.field) {
        const changes = (odds.changes || []).filter((c) => c.field === hint.field && (id === null || c.character === id));
        const sum = changes.reduce((total, c) => total + Number(c.mean), 0) * (hint.loss ? -1 : 1);
        if (!changes.length || !(sum > 0)) continue;
        args.mean = sum.toFixed(1);
      }
      const text = t(qualified(hint.pack, `odds.${hint.hintId}.name`), args);
      if (!text) continue;
      if (!groups.has(id)) groups.set(id, []);
      groups.get(id).push(text);
    }
  }
  const named = [...groups.keys()].filter((id) => id !== null).length > 1;
  const lines = [...groups].map(([id, phrases]) => `${named && id !== null ? `${id}: ` : ""}${phrases.join(" · ")}`);
  return lines.length ? lines.join(named ? "; " : " · ") : null;
}
function oddsParts(actionId, odds) {
  if (!odds) return [];
  const parts = [];
  const ranked = (results) => Object.entries(results || {}).filter(([r]) => r !== "").sort((a, b) => Number(b[1]) - Number(a[1]));
  const results = ranked(odds.results);
  if (results.length >= 2) parts.push(...results.map(([r, p]) => `${percent(p)} ${bandName(actionId, r)}`));
  for (const [role, list] of Object.entries(odds.participants || {})) {
    for (const entry of list) {
      const theirs = ranked(entry.results);
      if (theirs.length >= 2) parts.push(`${entry.id} (${humanize(role).toLowerCase()}): ${theirs.map(([r, p]) => `${percent(p)} ${humanize(r)}`).join(", ")}`);
    }
  }
  for (const change of odds.changes || []) {
    const mean = Number(change.mean);
    if (!mean) continue;
    const who = change.character && change.character !== state.id ? `${characterName(change.character)}'s ` : "";
    const sure = (change.distribution || []).length === 1;
    const amount = sure ? numberText(Math.abs(mean)) : Math.abs(mean).toFixed(1);
    parts.push(`${who}${fieldName(change.field)} ${mean < 0 ? "−" : "+"}${amount}${sure ? "" : " expected"}`);
  }
  return parts;
}
async function odds(input, box) {
  try {
    const nodes = oddsNodes(await oddsWords(input), "Odds before the roll");
    if (nodes.length) box.append(el("p", { class: "odds" }, nodes));
  } catch (_) { /* no odds for this action */ }
}

// ---------------------------------------------------------------------------------------------
// Inventory: the file's carried entries; equip, quantity and remove through applyChanges, an item
// added by its name from the ruleset.
async function refreshFile() {
  try {
    const stored = await call("GET", api(state.id));
    const before = JSON.stringify(state.file && [state.file.inventory, state.file.features, state.file.applied]);
    state.file = stored.character;
    if (before !== JSON.stringify([state.file.inventory, state.file.features, state.file.applied])) {
      renderInventory();
      renderIdentity();
      for (const section of document.querySelectorAll(".group")) if (section.redrawMembers) section.redrawMembers();
    }
  } catch (_) { /* a reader without the file */ }
}
function renderInventory() {
  const section = $("#inventory");
  const list = $("#inventory .items");
  const inventory = (state.file && state.file.inventory) || [];
  const carried = Object.entries(state.info.types || {}).filter(([, t]) => t.carried).map(([id]) => id);
  section.hidden = !inventory.length && !carried.length;
  list.replaceChildren();
  for (const entry of inventory) {
    const name = itemName(entry.item);
    const refusal = el("p", { class: "refusal", role: "alert" });
    const quantity = el("input", { type: "text", inputmode: "numeric", size: "3", value: String(entry.quantity ?? 1), "aria-label": `Quantity of ${name}` });
    quantity.addEventListener("change", () => write(() => ({ method: "POST", path: api(state.id, "/changes"), body: { changes: [{ type: "setQuantity", entry: entry.id, value: Number(quantity.value) }] } }), refusal, quantity));
    const equipped = el("input", { type: "checkbox", checked: !!entry.equipped, "aria-label": `${name} equipped` });
    equipped.addEventListener("change", () => write(() => ({ method: "POST", path: api(state.id, "/changes"), body: { changes: [{ type: "equip", entry: entry.id, equipped: equipped.checked }] } }), refusal, equipped));
    const remove = el("button", { type: "button", text: "Remove", "aria-label": `Remove ${name}` });
    remove.addEventListener("click", () => write(() => ({ method: "POST", path: api(state.id, "/changes"), body: { changes: [{ type: "removeItem", entry: entry.id }] } }), refusal));
    list.append(el("li", { "data-entry": entry.id }, el("span", { class: "item-name", text: name }),
      el("label", {}, equipped, "Equipped"), el("label", {}, "Qty", quantity), remove, refusal));
  }
  const names = $("#item-names");
  if (!names.children.length) {
    const options = Object.entries(state.info.items || {}).filter(([, type]) => carried.includes(type))
      .map(([id]) => [itemName(id), id]).sort((a, b) => a[0].localeCompare(b[0]));
    state.itemByName = new Map(options.map(([name, id]) => [name.toLowerCase(), id]));
    names.replaceChildren(...options.map(([name]) => el("option", { value: name })));
  }
}
$("#add-item").addEventListener("submit", async (event) => {
  event.preventDefault();
  const box = $("#add-item-name");
  const refusal = $("#add-item-refusal");
  const id = state.itemByName && state.itemByName.get(box.value.trim().toLowerCase());
  if (!id) { refusal.textContent = `No item named “${box.value.trim()}” in the rules.`; box.setAttribute("aria-invalid", "true"); return; }
  const done = await write(() => ({ method: "POST", path: api(state.id, "/changes"), body: { changes: [{ type: "addItem", entry: { item: quote(id) } }] } }), refusal, box);
  if (done) box.value = "";
});

// ---------------------------------------------------------------------------------------------
// Choices: pending first, each by its prompt; its options from listOptions, named and described,
// eligible or why not, and what picking each would change.
// A choice's text root: `<contentId>.choices.<choice>` of its owner (a granted item's choice,
// `<item>/<choice>`, under that item; a nested one under its parent's option), or
// `<pack>:choices.<id>` for a rules-level choice.
function choiceRoot(choice) {
  const path = (choice.path && choice.path.choice) || [];
  const entry = choice.path && choice.path.entry;
  const strip = (s) => String(s).replace(/-\d+$/, "");
  const owner = entry && (state.sheet.activations || []).find((a) => a.entry === entry && a.via === "copy");
  // The root so far: a content item's `…choices`, or the rules' `<pack>:choices`.
  let root;
  let rest = path;
  if (owner) {
    root = `${owner.item}.choices`;
  } else {
    const [pack, local] = split(String(path[0] || choice.id || ""));
    root = qualified(pack, "choices");
    rest = [local, ...path.slice(1)];
  }
  rest.forEach((segment, i) => {
    let name = strip(segment);
    if (i % 2 === 0) {
      // A granted item's choice, `<item>/<choice>`, is keyed under that item.
      if (name.includes("/")) {
        const granted = name.slice(0, name.lastIndexOf("/"));
        const item = granted.includes(":") ? granted : `${split(root)[0]}:${granted}`;
        root = `${item}.choices`;
        name = name.slice(name.lastIndexOf("/") + 1);
      }
      root += `.${name}`;
    } else if (String(segment).includes(":") && state.info.items[segment] !== undefined) {
      // A picked content item's own choices are keyed under the item.
      root = `${segment}.choices`;
    } else {
      root += `.options.${name}.choices`;
    }
  });
  return root;
}
function choicePrompt(choice) {
  const slot = choice.slot && choice.slot.number;
  const path = (choice.path && choice.path.choice) || [];
  return t(`${choiceRoot(choice)}.prompt`, { slot }) ?? t(`${choiceRoot(choice)}.name`, { slot }) ?? humanize(String(path[path.length - 1] || choice.id || ""));
}
// An option of a choice by its name: the choice's own option text, an item's name, a tag's name.
function choiceOption(choice, option) {
  const id = typeof option === "string" ? option : option && (option.option || option.id);
  if (id === undefined || id === null) return plain(option);
  const text = String(id);
  const own = t(`${choiceRoot(choice)}.options.${text}.name`);
  if (own) return own;
  if (text.includes(":")) return itemName(text.split("#")[0]);
  const [pack] = split(choiceRoot(choice));
  return t(qualified(pack, `tags.${text}.name`)) ?? t(qualified(pack, `fields.${text}.name`)) ?? humanize(text);
}
function renderChoices() {
  const list = $("#choices .list");
  list.replaceChildren();
  const pending = (state.sheet.pending || []).map((p) => ({ ...p, pending: true }));
  const made = (state.sheet.choices || []).filter((c) => !pending.some((p) => JSON.stringify(p.path) === JSON.stringify(c.path)));
  for (const choice of [...pending, ...made]) {
    const picks = (choice.picks || []).map((p) => choiceOption(choice, p)).join(", ");
    const prompt = choicePrompt(choice);
    const button = el("button", { type: "button", text: choice.pending ? "Choose" : "Change", "aria-label": `${choice.pending ? "Choose" : "Change"}: ${prompt}`, "data-choice": (choice.path.choice || []).join("/") });
    button.addEventListener("click", () => listOptions(choice, prompt));
    list.append(el("li", {}, el("span", { text: `${prompt}${choice.pending ? " (to choose)" : ""}${picks ? `: ${picks}` : ""} ` }), button));
  }
  $("#choices").hidden = !list.children.length;
  $("#guide-start").hidden = !pending.length;
}

async function listOptions(choice, prompt, box = $("#option-list")) {
  box.replaceChildren(el("p", { text: "Listing the options…" }));
  try {
    const answer = await call("POST", api(state.id, "/options"), { path: choice.path });
    const listed = answer.options;
    const heading = el("h3", { tabindex: "-1", text: prompt });
    const cards = [];
    for (const option of listed.options || []) {
      const id = typeof option.option === "string" ? option.option : JSON.stringify(option.option);
      const name = choiceOption(choice, option.option);
      const card = el("div", { class: `option-card${option.eligible ? "" : " ineligible"}`, "data-option": id });
      card.append(el("h3", { text: name + (option.picked ? " (picked)" : "") }));
      const description = String(id).includes(":") ? t(`${id}.description`) : t(`${choiceRoot(choice)}.options.${id}.description`);
      if (description) card.append(el("p", { class: "desc", text: description }));
      if (!option.eligible) {
        const why = (option.reasons || []).map((r) => (r.code ? worded(r, "issues") : plain(r))).join("; ");
        card.append(el("p", { class: "why", text: `Not eligible: ${why || "the rules refuse it"}` }));
      }
      const changes = ((option.changes && option.changes.values) || []).map((v) => `${fieldName(v.field)} ${plain(v.before && v.before.value)} → ${plain(v.after && v.after.value)}`);
      if (changes.length) card.append(el("p", { class: "would", text: `Picking it: ${changes.join("; ")}` }));
      // Roll effects change no field (Dueling's +2 damage): every option that may be picked is
      // tried for the attacks' odds.
      if (option.eligible && !option.picked) card.dataset.trial = "yes";
      if (option.eligible && !option.picked) {
        const refusal = el("p", { class: "refusal", role: "alert" });
        card.append(el("button", { type: "button", class: "primary", text: `Pick ${name}`, onclick: () => choose(listed, id, refusal, box) }), refusal);
      }
      cards.push(card);
    }
    const close = box.id === "option-list" ? el("button", { type: "button", text: "Close", onclick: () => box.replaceChildren() }) : null;
    box.replaceChildren(heading, ...cards, ...(close ? [close] : []));
    heading.focus();
    optionOdds(listed, cards);
  } catch (error) {
    box.replaceChildren(el("p", { class: "refusal", text: error.message }));
  }
}

// The changes that pick `option`: in a full choice the last pick gives way, as listOptions'
// trial made it.
function pickChanges(listed, option) {
  const changes = [];
  const picks = listed.picks || [];
  if (listed.max !== undefined && picks.length >= listed.max && picks.length) {
    const last = picks[picks.length - 1];
    changes.push({ type: "unchoose", path: listed.path, option: quote(typeof last === "string" ? last : last.option) });
  }
  changes.push({ type: "choose", path: listed.path, option: quote(option) });
  return changes;
}
async function choose(listed, option, refusal, box = $("#option-list")) {
  const done = await write(() => ({ method: "POST", path: api(state.id, "/changes"), body: { changes: pickChanges(listed, option) } }), refusal);
  if (done) {
    box.replaceChildren();
    if (state.guided && box.id === "guide-options") { state.guided.made++; guideStep(); }
  }
}

// The guided flow after a level up or a new class: every pending choice in order, each with its
// options from listOptions (named, described, eligible or why not, what picking it changes, the
// attacks' odds before → after); one may be skipped; at the end, the sheet's issues in words.
function startGuide(title) {
  state.guided = { title, skipped: new Set(), made: 0 };
  $("#guide-title").textContent = title;
  $("#guide").hidden = false;
  guideStep();
}
function guideStep() {
  const guided = state.guided;
  if (!guided) return;
  const pending = (state.sheet.pending || []).filter((p) => !guided.skipped.has(JSON.stringify(p.path)));
  const progress = $("#guide-progress");
  const issues = $("#guide-issues");
  issues.replaceChildren(...(state.sheet.issues || []).map((issue) => el("li", { text: issueWords(issue) })));
  $("#guide-issues-title").hidden = !issues.children.length;
  if (!pending.length) {
    const skipped = guided.skipped.size ? ` ${guided.skipped.size} left for later (under Choices).` : "";
    progress.textContent = `Done: ${guided.made} ${guided.made === 1 ? "choice" : "choices"} made.${skipped}`;
    $("#guide-options").replaceChildren();
    $("#guide-skip").hidden = true;
    $("#guide-close").textContent = "Close";
    $("#guide-close").focus();
    return;
  }
  const choice = { ...pending[0], pending: true };
  progress.textContent = `Choice ${guided.made + guided.skipped.size + 1}: ${pending.length} still to make.`;
  $("#guide-skip").hidden = false;
  $("#guide-skip").onclick = () => { guided.skipped.add(JSON.stringify(choice.path)); guideStep(); };
  $("#guide-close").textContent = "Finish later";
  listOptions(choice, choicePrompt(choice), $("#guide-options"));
}
$("#guide-start").addEventListener("click", () => startGuide("Pending choices"));
$("#guide-close").addEventListener("click", () => {
  state.guided = null;
  $("#guide").hidden = true;
  $("#guide-options").replaceChildren();
});

// The character's attacks: its actions that take a participant and declare results (a weapon's
// attack), those needing no parameter the player must give; a few, the first on the sheet.
function attacks() {
  return sheetActions().filter((action) => {
    const declared = state.info.actions[action.id];
    if (!declared || !declared.results || !Object.keys(declared.participants || {}).length) return false;
    return Object.values(declared.params || {}).every((p) => p.optional || p.default !== undefined);
  }).slice(0, 3);
}
// Against whom option odds are worked out: the target last picked in a roll form, else the first
// other stored character.
function referenceTarget() {
  const others = state.characters.filter((c) => c.id !== state.id).map((c) => c.id);
  return others.includes(state.lastTarget) ? state.lastTarget : others[0];
}
// On each option whose pick changes the sheet: each attack's odds now → after the pick (the
// route's `trial`, listOptions' pick made on a copy), where they differ.
async function optionOdds(listed, cards) {
  const target = referenceTarget();
  const trials = cards.filter((card) => card.dataset.trial).slice(0, 12);
  if (!target || !trials.length) return;
  for (const action of attacks()) {
    try {
      const declared = state.info.actions[action.id];
      const [role, decl] = Object.entries(declared.participants)[0];
      const input = { action: { id: action.id }, participants: { [role]: [await participantView(target, decl, action.id)] } };
      if (action.entry) input.action.entry = action.entry;
      if (action.source) input.action.source = action.source;
      const before = await oddsPartsFor(input);
      for (const card of trials) {
        if (!card.isConnected) return;
        const after = await oddsPartsFor(input, pickChanges(listed, card.dataset.option));
        if (!after.length || after.join() === before.join()) continue;
        // Only what changes, each part now → after, where the two list the same parts.
        const changed = after.length === before.length
          ? after.map((part, i) => (part === before[i] ? null : `${before[i]} → ${part}`)).filter(Boolean).join(" · ")
          : `${before.join(" · ") || "—"} → ${after.join(" · ")}`;
        card.append(el("p", { class: "odds option-odds", text: `${actionLabel(action)} against ${target}: ${changed}` }));
      }
    } catch (_) { /* no odds for this attack */ }
  }
}

// An issue in words, led by the choice and option it is about when its data names them
// (`option-not-eligible`: "Wizard spells: Fireball — This option may not be picked").
function issueWords(issue) {
  const text = worded(issue, "issues");
  const data = issue.data || {};
  if (!data.path || !Array.isArray(data.path.choice)) return text;
  try {
    const choice = { path: data.path, id: data.path.choice[data.path.choice.length - 1] };
    const option = data.option !== undefined ? `: ${choiceOption(choice, data.option)}` : "";
    return `${choicePrompt(choice)}${option} — ${text}`;
  } catch (_) { return text; }
}

function renderIssues() {
  const list = $("#issues .list");
  list.replaceChildren();
  for (const issue of state.sheet.issues || []) list.append(el("li", { text: issueWords(issue) }));
  for (const error of state.sheet.errors || []) list.append(el("li", { text: `${worded(error, "errors")}${error.field ? ` (${fieldName(error.field)})` : ""}` }));
  $("#issues").hidden = !list.children.length;
}

// Competing options (EC "Competing options"): each group's options as buttons, the applied one
// marked; a pick is saved in the file's `competing` in place of the group's other options.
function renderCompeting() {
  const list = $("#competing .list");
  list.replaceChildren();
  for (const group of state.sheet.competing || []) {
    const li = el("li", { text: `${fieldName(group.field)}: ` });
    for (const option of group.options || []) {
      const source = option.source ? sourceName(option.source) : "";
      li.append(el("button", {
        type: "button", "data-option": option.id, "aria-pressed": String(option.id === group.applied),
        text: `${source || humanize(option.id)} ${plain(option.value)}`, onclick: () => pickCompeting(group, option.id),
      }), " ");
    }
    list.append(li);
  }
  $("#competing").hidden = !list.children.length;
}
async function pickCompeting(group, id) {
  try {
    const path = api(state.id);
    const stored = await call("GET", path);
    const character = stored.character;
    const others = new Set((group.options || []).map((o) => o.id));
    character.competing = (character.competing || []).filter((c) => !others.has(c));
    character.competing.push(id);
    await call("PUT", path, { revision: stored.revision, character });
  } catch (error) {
    status(error.message, true);
  }
}

// ---------------------------------------------------------------------------------------------
// Pushed changes: only the rows and parts an event names are drawn again.
function applyChanged(event) {
  state.revision = event.revision;
  if (event.inputs) state.inputs = event.inputs;
  const redraw = new Set();
  let missing = false;
  for (const [field, value] of Object.entries(event.values || {})) {
    state.sheet.values[field] = value;
    const places = state.rows.get(field);
    if (places) for (const draw of places) redraw.add(draw);
    else if (!state.hints.length) missing = true;
  }
  for (const field of event.removed || []) {
    delete state.sheet.values[field];
    const places = state.rows.get(field);
    if (places) for (const draw of places) redraw.add(draw);
  }
  for (const draw of redraw) draw();
  const parts = event.parts || {};
  for (const [part, value] of Object.entries(parts)) state.sheet[part] = value;
  if (parts.actions) renderActions();
  if (parts.pending || parts.choices) renderChoices();
  if (parts.issues || parts.errors) renderIssues();
  if (parts.competing) renderCompeting();
  if (parts.activations) {
    renderIdentity();
    for (const section of document.querySelectorAll(".group")) if (section.redrawMembers) section.redrawMembers();
  }
  if (redraw.size) renderStates();
  if (missing) renderSheet();
  if (state.lastEdit) {
    const started = state.lastEdit.at;
    state.lastEdit = null;
    requestAnimationFrame(() => {
      window.ocfLastRepaintMs = performance.now() - started;
    });
  }
  status(`Saved · revision ${state.revision}`);
  refreshFile();
}

function subscribe(id) {
  if (state.events) state.events.close();
  state.asks = new Map();
  state.askRolling = null;
  renderAsks();
  const events = new EventSource(api(id, "/events"));
  events.addEventListener("sheet", (e) => {
    const data = JSON.parse(e.data);
    state.revision = data.revision;
    state.sheet = data.sheet;
    state.inputs = data.inputs || {};
    if (state.info && state.info.id === id) renderSheet();
  });
  events.addEventListener("changed", (e) => {
    const event = JSON.parse(e.data);
    // An edit this page made is drawn from its answer already.
    if (state.info && event.revision > state.revision) applyChanged(event);
  });
  events.addEventListener("resync", () => open(id, true));
  events.addEventListener("ask", (e) => heardAsk(JSON.parse(e.data)));
  events.addEventListener("withdrawn", (e) => withdrawnAsk(JSON.parse(e.data)));
  events.addEventListener("answered", (e) => {
    const answered = JSON.parse(e.data);
    const waiting = state.asked.get(answered.key);
    if (waiting) { state.asked.delete(answered.key); waiting(answered.outcome || {}); }
  });
  events.onerror = () => status("Reconnecting…", true);
  state.events = events;
}

async function open(id, quiet) {
  state.id = id;
  const [sheet, info, stored] = await Promise.all([
    call("GET", api(id, "/sheet")),
    state.info && state.info.id === id ? Promise.resolve(state.info) : call("GET", api(id, "/texts")),
    call("GET", api(id)).catch(() => null),
  ]);
  if (!state.info || state.info.id !== id) { $("#item-names").replaceChildren(); }
  state.info = info;
  state.revision = sheet.revision;
  state.sheet = sheet.sheet;
  state.inputs = sheet.inputs || {};
  state.file = stored && stored.character;
  document.documentElement.lang = info.locale || "en";
  loadHints();
  renderSheet();
  if (!quiet) {
    status(`Revision ${state.revision}`);
    resumeAsk(id);
  }
}

// A stored character by its name (the list's `name`: its title field, as its sheet's header shows
// it), by its ID when it has none; two of one name are told apart by their IDs.
function characterName(id) {
  const listed = state.characters.find((c) => c.id === id);
  const name = listed && listed.name;
  if (!name) return id;
  const same = state.characters.filter((c) => c.name && c.name.toLowerCase() === name.toLowerCase());
  return same.length > 1 ? `${name} (${id})` : name;
}
// The open character renamed on this page: its place in the list follows.
function renamed(name) {
  const listed = state.characters.find((c) => c.id === state.id);
  if (!listed || (listed.name || null) === name) return;
  listed.name = name;
  for (const option of $("#characters").options) option.textContent = characterName(option.value);
}

async function listCharacters(select) {
  const list = await call("GET", "/api/characters");
  state.characters = list;
  const picker = $("#characters");
  picker.replaceChildren(...list.map((c) => el("option", { value: c.id, text: characterName(c.id) })));
  const wanted = select || new URLSearchParams(location.search).get("character") || (list[0] && list[0].id);
  if (wanted) {
    picker.value = wanted;
    await open(wanted);
    subscribe(wanted);
  }
}

$("#characters").addEventListener("change", async (e) => {
  const id = e.target.value;
  history.replaceState(null, "", `?character=${encodeURIComponent(id)}`);
  await open(id);
  subscribe(id);
});
$("#upload").addEventListener("change", async (e) => {
  const file = e.target.files[0];
  if (!file) return;
  try {
    const text = await file.text();
    const made = await call("POST", "/api/characters", { character: text });
    await listCharacters(made.id);
  } catch (error) {
    status(error.message, true);
  }
});
$("#edit-mode").addEventListener("click", () => {
  state.editing = !state.editing;
  document.body.classList.toggle("editing", state.editing);
  $("#edit-mode").setAttribute("aria-pressed", String(state.editing));
  for (const section of document.querySelectorAll(".group")) groupVisibility(section);
});

// Undo: the last change taken back as a new write (`POST …/undo`); made against the revision shown,
// so a change made elsewhere meanwhile is not undone blindly (409: the sheet is brought up to date).
$("#undo").addEventListener("click", async () => {
  if (!state.id) return;
  try {
    const answer = await call("POST", api(state.id, "/undo"), { revision: state.revision });
    if (answer.changes && answer.revision > state.revision) applyChanged({ ...answer.changes, revision: answer.revision });
    else refreshFile();
    status(`Undone · revision ${answer.revision}`);
  } catch (error) {
    if (error.status === 409) await open(state.id, true);
    status(error.errors && error.errors.length ? error.errors.map((e) => worded(e)).join(" ") : error.message, true);
  }
});

// Logging in: the service answers 401 until the browser holds a session cookie (HttpOnly, so this
// script never sees it); the open service (no accounts, loopback) needs none.
function showLogin() {
  $("#login").hidden = false;
  $("main").hidden = true;
  $("#logout").hidden = true;
  if (state.events) state.events.close();
}
$("#login").addEventListener("submit", async (e) => {
  e.preventDefault();
  try {
    await call("POST", "/api/login", { user: $("#login-user").value, password: $("#login-password").value });
    $("#login-password").value = "";
    $("#login-error").textContent = "";
    await begin();
  } catch (error) {
    $("#login-error").textContent = error.message;
  }
});
$("#logout").addEventListener("click", async () => {
  await call("POST", "/api/logout").catch(() => {});
  showLogin();
});

async function begin() {
  const me = await call("GET", "/api/me");
  state.me = me;
  $("#login").hidden = true;
  $("main").hidden = false;
  $("#who").textContent = me.open ? "open (no accounts)" : `${me.user} (${me.role})`;
  $("#logout").hidden = me.open;
  await listCharacters();
}

begin().catch((error) => { if (error.status !== 401) status(error.message, true); });
