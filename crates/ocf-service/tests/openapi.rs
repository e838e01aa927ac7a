//! The OpenAPI description at `/api/openapi.json`: valid OpenAPI 3 (read back by utoipa's own
//! types, every reference resolving, every path parameter declared), every route the router
//! serves in it and every described route served, and the service's real answers as it describes
//! them (each key it gives described, each key it requires given, each of the described type).

mod support;

use std::collections::BTreeSet;

use ocf_service::Limits;
use serde_json::{Value, json};
use support::*;

const METHODS: [&str; 4] = ["get", "post", "put", "delete"];

fn described() -> Value {
    serde_json::to_value(ocf_service::openapi::description()).unwrap()
}

/// `#/components/schemas/NAME`'s schema.
fn resolve<'a>(description: &'a Value, reference: &str) -> &'a Value {
    let name = reference
        .strip_prefix("#/components/schemas/")
        .unwrap_or_else(|| panic!("a reference outside the components: {reference}"));
    let found = &description["components"]["schemas"][name];
    assert!(found.is_object(), "`{reference}` does not resolve");
    found
}

/// Where `value` differs from `schema`: each a path and what is wrong.
fn mismatches(description: &Value, schema: &Value, value: &Value, at: &str) -> Vec<String> {
    if let Some(reference) = schema["$ref"].as_str() {
        return mismatches(description, resolve(description, reference), value, at);
    }
    for (key, all) in [("oneOf", false), ("anyOf", false), ("allOf", true)] {
        if let Some(choices) = schema[key].as_array() {
            let failing: Vec<Vec<String>> = choices
                .iter()
                .map(|c| mismatches(description, c, value, at))
                .collect();
            let fits = if all {
                failing.iter().all(Vec::is_empty)
            } else {
                failing.iter().any(Vec::is_empty)
            };
            if !fits {
                return vec![format!("{at}: not {key} of {failing:?}")];
            }
        }
    }
    let kind = match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    };
    let types: Vec<&str> = match &schema["type"] {
        Value::String(t) => vec![t.as_str()],
        Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    let fits = types.is_empty()
        || types.contains(&kind)
        || (kind == "integer" && types.contains(&"number"));
    if !fits {
        return vec![format!("{at}: a {kind}, described as {types:?}")];
    }
    let mut wrong = Vec::new();
    if let (Value::Object(object), Some(properties)) = (value, schema["properties"].as_object()) {
        for required in schema["required"].as_array().into_iter().flatten() {
            let required = required.as_str().unwrap();
            if !object.contains_key(required) {
                wrong.push(format!("{at}: `{required}` is required and missing"));
            }
        }
        for (key, value) in object {
            match properties.get(key) {
                Some(property) => wrong.extend(mismatches(
                    description,
                    property,
                    value,
                    &format!("{at}/{key}"),
                )),
                None if schema.get("additionalProperties").is_none() => {
                    wrong.push(format!("{at}/{key}: answered and not described"))
                }
                None => {}
            }
        }
    }
    if let (Value::Array(items), Some(schema)) = (value, schema.get("items")) {
        for (i, item) in items.iter().enumerate() {
            wrong.extend(mismatches(description, schema, item, &format!("{at}/{i}")));
        }
    }
    wrong
}

/// The described answer of `method template` with `status`, as JSON.
fn answer_schema<'a>(
    description: &'a Value,
    method: &str,
    template: &str,
    status: u16,
) -> &'a Value {
    let operation = &description["paths"][template][method];
    assert!(
        operation.is_object(),
        "{method} {template} is not described"
    );
    let schema =
        &operation["responses"][status.to_string()]["content"]["application/json"]["schema"];
    assert!(
        schema.is_object(),
        "{method} {template} does not describe a {status} JSON answer"
    );
    schema
}

/// Sends the request and checks its answer against the description; the answer.
fn exchange(
    description: &Value,
    addr: std::net::SocketAddr,
    method: &str,
    template: &str,
    path: &str,
    body: Option<Value>,
) -> (u16, Value) {
    let body = body.map(|b| b.to_string());
    let (status, answer) = request(addr, &method.to_uppercase(), path, body.as_deref());
    let schema = answer_schema(description, method, template, status);
    let wrong = mismatches(description, schema, &answer, "");
    assert!(
        wrong.is_empty(),
        "{method} {path} answered {status} not as described: {wrong:#?}\n{}",
        answer.to_string().chars().take(600).collect::<String>()
    );
    (status, answer)
}

#[test]
fn the_served_description_is_valid_openapi_3_and_whole() {
    let dir = temp_dir("openapi");
    let addr = start(&dir.join("store.sqlite3"), Limits::default());
    let (status, served) = request(addr, "GET", "/api/openapi.json", None);
    assert_eq!(status, 200);
    assert_eq!(served, described());

    // Read back by utoipa's own types: an OpenAPI 3 document, as it was written.
    let read: utoipa::openapi::OpenApi = serde_json::from_value(served.clone()).unwrap();
    assert_eq!(serde_json::to_value(&read).unwrap(), served);
    assert!(served["openapi"].as_str().unwrap().starts_with("3."));
    assert_eq!(served["info"]["title"], "ocf serve");
    assert!(served["info"]["version"].is_string());

    let paths = served["paths"].as_object().unwrap();
    for (template, item) in paths {
        let named: BTreeSet<&str> = template
            .split('/')
            .filter_map(|part| part.strip_prefix('{')?.strip_suffix('}'))
            .collect();
        for method in METHODS {
            let Some(operation) = item.get(method) else {
                continue;
            };
            let at = format!("{method} {template}");
            assert!(operation["operationId"].is_string(), "{at}");
            assert!(
                operation["tags"].as_array().is_some_and(|t| !t.is_empty()),
                "{at}"
            );
            assert!(
                operation["summary"].is_string() || operation["description"].is_string(),
                "{at} says nothing of what it does"
            );
            // Every parameter of the path declared, and only those, each required.
            let declared: BTreeSet<&str> = operation["parameters"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|p| p["in"] == "path")
                .map(|p| {
                    assert_eq!(p["required"], true, "{at}: {p}");
                    p["name"].as_str().unwrap()
                })
                .collect();
            assert_eq!(declared, named, "{at}");
            let responses = operation["responses"].as_object().unwrap();
            assert!(responses.contains_key("200"), "{at}");
            // The error answers: the guard's at least, each with the one error shape.
            for status in ["400", "403", "408", "421", "500"] {
                let Some(error) = responses.get(status) else {
                    panic!("{at} does not describe {status}");
                };
                assert_eq!(
                    error["content"]["application/json"]["schema"]["$ref"],
                    "#/components/schemas/Errors",
                    "{at} {status}"
                );
            }
            if template.starts_with("/api/characters") {
                for status in ["401", "403", "404", "503"] {
                    assert!(
                        responses.contains_key(status),
                        "{at} does not describe {status}"
                    );
                }
            }
            if let Some(body) = operation.get("requestBody") {
                assert!(
                    body["content"]["application/json"]["schema"]["$ref"].is_string(),
                    "{at}: {body}"
                );
                for status in ["413", "415", "422"] {
                    assert!(
                        responses.contains_key(status) || template == "/api/login",
                        "{at} takes a body and does not describe {status}"
                    );
                }
            }
        }
    }
    // Every reference resolves.
    fn references<'a>(value: &'a Value, out: &mut Vec<&'a str>) {
        match value {
            Value::Object(map) => {
                if let Some(Value::String(r)) = map.get("$ref") {
                    out.push(r);
                }
                map.values().for_each(|v| references(v, out));
            }
            Value::Array(items) => items.iter().for_each(|v| references(v, out)),
            _ => {}
        }
    }
    let mut found = Vec::new();
    references(&served, &mut found);
    assert!(found.len() > 30);
    for reference in found {
        resolve(&served, reference);
    }
    let schemes = served["components"]["securitySchemes"].as_object().unwrap();
    assert_eq!(schemes["token"]["scheme"], "bearer");
    assert_eq!(schemes["session"]["in"], "cookie");

    // A service with accounts gives its description to anyone (an app's client is generated
    // before anyone logs in), and nothing else.
    let store =
        ocf_service::store::SqliteStore::open(dir.join("accounts.sqlite3").to_str().unwrap())
            .unwrap();
    ocf_service::accounts::put_user(
        &store,
        "gm",
        ocf_service::accounts::Role::Gamemaster,
        Some("correct horse"),
    )
    .unwrap();
    let guarded = start_on(Box::new(store), Limits::default());
    let (status, public) = request(guarded, "GET", "/api/openapi.json", None);
    assert_eq!((status, public), (200, served));
    let (status, answer) = request(guarded, "GET", "/api/characters", None);
    assert_eq!((status, codes(&answer)), (401, vec!["unauthenticated"]));
}

#[test]
fn every_route_the_router_serves_is_described_and_every_described_one_is_served() {
    // The router is made from the description's table (`api::routes`): no route is added beside
    // it, which would be served without being described.
    let src = repo().join("crates/ocf-service/src");
    for entry in std::fs::read_dir(&src).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        for forbidden in [
            ".route(",
            ".route_service(",
            ".nest(",
            ".nest_service(",
            "Router::new()",
        ] {
            let beside = text
                .match_indices(forbidden)
                .any(|(at, _)| !text[..at].ends_with("OpenApi"));
            assert!(
                !beside,
                "{} adds a route beside the described table (`{forbidden}`): use `routes!` and \
                 `#[utoipa::path]`",
                path.display()
            );
        }
    }

    let description = described();
    let paths = description["paths"].as_object().unwrap();
    let mut expected: BTreeSet<String> = [
        "get /",
        "get /sheet.js",
        "get /sheet.css",
        "get /api/openapi.json",
        "post /api/login",
        "post /api/logout",
        "get /api/me",
        "get /api/characters",
        "post /api/characters",
        "get /api/characters/{id}",
        "put /api/characters/{id}",
        "delete /api/characters/{id}",
        "put /api/characters/{id}/ownership",
        "get /api/characters/{id}/sheet",
        "get /api/characters/{id}/fields/{field}",
        "put /api/characters/{id}/values/{field}",
        "post /api/characters/{id}/changes",
        "post /api/characters/{id}/options",
        "post /api/characters/{id}/actions",
        "post /api/characters/{id}/actions/continue",
        "post /api/characters/{id}/odds",
        "post /api/characters/{id}/asks",
        "post /api/characters/{id}/asks/answer",
        "post /api/characters/{id}/asks/withdraw",
        "post /api/characters/{id}/close",
        "get /api/characters/{id}/history",
        "get /api/characters/{id}/history/{revision}",
        "post /api/characters/{id}/revert",
        "post /api/characters/{id}/undo",
        "get /api/characters/{id}/events",
        "get /api/characters/{id}/texts",
    ]
    .into_iter()
    .map(str::to_owned)
    .collect();
    let mut found = BTreeSet::new();
    for (template, item) in paths {
        for method in METHODS {
            if item.get(method).is_some() {
                found.insert(format!("{method} {template}"));
            }
        }
    }
    // The web page's routes come and go with the page: whatever it adds is described too.
    for extra in found.difference(&expected.clone()) {
        assert!(
            !extra.contains(" /api/"),
            "`{extra}` is not known to this test"
        );
        expected.insert(extra.clone());
    }
    assert_eq!(found, expected);

    // Each described route is served, and a described path answers no other method.
    let dir = temp_dir("openapi-routes");
    let addr = start(&dir.join("store.sqlite3"), Limits::default());
    for (template, item) in paths {
        let path = template
            .replace("{id}", "nobody")
            .replace("{field}", "hp.current")
            .replace("{revision}", "1");
        for method in METHODS {
            let (status, answer) = request(addr, &method.to_uppercase(), &path, Some("{}"));
            let codes = codes(&answer);
            if item.get(method).is_some() {
                assert!(
                    status != 405
                        && !(status == 404
                            && answer["errors"][0]["message"]
                                .as_str()
                                .is_some_and(|m| m.starts_with("no such route"))),
                    "{method} {template} is described and not served: {status} {answer}"
                );
            } else {
                assert_eq!(
                    (status, codes),
                    (405, vec!["method-not-allowed"]),
                    "{method} {template} is served and not described"
                );
            }
        }
    }
}

#[test]
fn the_services_answers_are_as_described() {
    let d = described();
    let dir = temp_dir("openapi-answers");
    let addr = start(&dir.join("store.sqlite3"), Limits::default());
    let fighter =
        std::fs::read_to_string(repo().join("testdata/characters/fighter-5.yaml")).unwrap();
    let c = "/api/characters/aldric";

    exchange(&d, addr, "get", "/api/me", "/api/me", None);
    exchange(
        &d,
        addr,
        "post",
        "/api/characters",
        "/api/characters",
        Some(json!({ "id": "aldric", "character": fighter })),
    );
    exchange(&d, addr, "get", "/api/characters", "/api/characters", None);
    exchange(&d, addr, "get", "/api/characters/{id}", c, None);
    exchange(
        &d,
        addr,
        "get",
        "/api/characters/{id}/sheet",
        &format!("{c}/sheet"),
        None,
    );
    exchange(
        &d,
        addr,
        "get",
        "/api/characters/{id}/fields/{field}",
        &format!("{c}/fields/hp.current"),
        None,
    );
    let (status, _) = exchange(
        &d,
        addr,
        "put",
        "/api/characters/{id}/values/{field}",
        &format!("{c}/values/hp.current"),
        Some(json!({ "revision": 1, "value": 30 })),
    );
    assert_eq!(status, 200);
    // A refusal: the one error shape.
    let (status, _) = exchange(
        &d,
        addr,
        "put",
        "/api/characters/{id}/values/{field}",
        &format!("{c}/values/hp.current"),
        Some(json!({ "revision": 1, "value": 31 })),
    );
    assert_eq!(status, 409);
    let (status, _) = exchange(
        &d,
        addr,
        "put",
        "/api/characters/{id}/values/{field}",
        &format!("{c}/values/hp.current"),
        Some(json!({ "value": 31 })),
    );
    assert_eq!(status, 400);
    let (status, _) = exchange(
        &d,
        addr,
        "get",
        "/api/characters/{id}/sheet",
        "/api/characters/nobody/sheet",
        None,
    );
    assert_eq!(status, 404);
    let (status, _) = exchange(
        &d,
        addr,
        "post",
        "/api/characters/{id}/changes",
        &format!("{c}/changes"),
        Some(json!({ "revision": 2, "changes": [
            { "type": "adjust", "field": "hp.current", "by": "-12", "tags": ["damage"] }
        ] })),
    );
    assert_eq!(status, 200);
    let (status, file) = exchange(&d, addr, "get", "/api/characters/{id}", c, None);
    assert_eq!(status, 200);
    let (status, _) = exchange(
        &d,
        addr,
        "put",
        "/api/characters/{id}",
        c,
        Some(json!({ "revision": 3, "character": file["character"] })),
    );
    assert_eq!(status, 200);
    exchange(
        &d,
        addr,
        "post",
        "/api/characters/{id}/options",
        &format!("{c}/options"),
        Some(json!({ "path": { "entry": "fighter",
                               "choice": ["features.fighter.fighting-style/style"] } })),
    );
    let attack = json!({
        "action": { "id": "5e-srd-5.1:weapon-attack", "entry": "longsword" },
        "participants": { "target": [{ "id": "goblin", "values": { "5e-srd-5.1:combat.ac": 15 } }] },
    });
    exchange(
        &d,
        addr,
        "post",
        "/api/characters/{id}/odds",
        &format!("{c}/odds"),
        Some(attack.clone()),
    );
    let mut paused = attack;
    paused["policy"] = json!({ "dice": "pause" });
    let (status, started) = exchange(
        &d,
        addr,
        "post",
        "/api/characters/{id}/actions",
        &format!("{c}/actions"),
        Some(paused),
    );
    assert_eq!(status, 200);
    let (status, _) = exchange(
        &d,
        addr,
        "post",
        "/api/characters/{id}/actions/continue",
        &format!("{c}/actions/continue"),
        Some(json!({ "state": started["result"]["state"], "answer": { "faces": [12] } })),
    );
    assert_eq!(status, 200);
    exchange(
        &d,
        addr,
        "get",
        "/api/characters/{id}/texts",
        &format!("{c}/texts?lang=en"),
        None,
    );
    exchange(
        &d,
        addr,
        "get",
        "/api/characters/{id}/history",
        &format!("{c}/history"),
        None,
    );
    exchange(
        &d,
        addr,
        "get",
        "/api/characters/{id}/history/{revision}",
        &format!("{c}/history/1"),
        None,
    );
    let (status, _) = exchange(
        &d,
        addr,
        "post",
        "/api/characters/{id}/revert",
        &format!("{c}/revert"),
        Some(json!({ "revision": 4, "to": 1 })),
    );
    assert_eq!(status, 200);
    let (status, _) = exchange(
        &d,
        addr,
        "post",
        "/api/characters/{id}/undo",
        &format!("{c}/undo"),
        Some(json!({ "revision": 5 })),
    );
    assert_eq!(status, 200);
    exchange(
        &d,
        addr,
        "put",
        "/api/characters/{id}/ownership",
        &format!("{c}/ownership"),
        Some(json!({ "owner": null, "shared": true })),
    );
    // A roll asked of another character's player, answered, collected; each refusal coded.
    let ask =
        json!({ "from": "aldric", "key": "k", "run": { "action": "5e-srd-5.1:saving-throw" } });
    let reply = json!({ "to": "aldric", "key": "k", "outcome": { "result": "success" } });
    let collect = json!({ "from": "aldric", "key": "k" });
    for (route, body, status) in [
        ("asks", &ask, 200),
        ("asks", &ask, 409),
        ("asks/answer", &reply, 200),
        ("asks/answer", &reply, 409),
        ("asks/withdraw", &collect, 200),
        ("asks/withdraw", &collect, 404),
    ] {
        let (got, _) = exchange(
            &d,
            addr,
            "post",
            &format!("/api/characters/{{id}}/{route}"),
            &format!("{c}/{route}"),
            Some(body.clone()),
        );
        assert_eq!(got, status, "{route}");
    }
    exchange(
        &d,
        addr,
        "post",
        "/api/characters/{id}/close",
        &format!("{c}/close"),
        None,
    );
    exchange(&d, addr, "delete", "/api/characters/{id}", c, None);
    exchange(
        &d,
        addr,
        "post",
        "/api/login",
        "/api/login",
        Some(json!({ "user": "someone", "password": "secret" })),
    );
    exchange(&d, addr, "post", "/api/logout", "/api/logout", None);
}
