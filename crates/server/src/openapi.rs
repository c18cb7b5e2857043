//! The API's OpenAPI 3.0 document (`GET /api/openapi.json`), generated
//! from the request and response types (schemars) and one table of the
//! operations. A test checks the table against the routes the router
//! serves, both ways.

use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde_json::{Map, Value, json};

use crate::api;

/// A schema generator, for a type in the table.
type SchemaOf = fn(&mut SchemaGenerator) -> Schema;

/// The reference to `T`'s schema (its definition goes to the components).
fn of<T: JsonSchema>(generator: &mut SchemaGenerator) -> Schema {
    generator.subschema_for::<T>()
}

/// The inline schema of a query's type, whose properties become the
/// operation's query parameters.
fn query<T: JsonSchema>(_: &mut SchemaGenerator) -> Schema {
    schemars::schema_for!(T)
}

/// One operation of the API.
pub(crate) struct Operation {
    /// `get`, `post` or `delete`.
    pub(crate) method: &'static str,
    /// The path, with `{id}`-style parameters, as the router names it.
    pub(crate) path: &'static str,
    summary: &'static str,
    query: Option<SchemaOf>,
    body: Option<SchemaOf>,
    status: u16,
    /// The response's media type and its schema (`None`: not JSON).
    response: (&'static str, Option<SchemaOf>),
}

const JSON: &str = "application/json";

/// Every operation the API serves.
pub(crate) const OPERATIONS: &[Operation] = &[
    Operation {
        method: "get",
        path: "/api/health",
        summary: "The server answers, and which store it has.",
        query: None,
        body: None,
        status: 200,
        response: (JSON, Some(of::<api::Health>)),
    },
    Operation {
        method: "get",
        path: "/api/openapi.json",
        summary: "This document.",
        query: None,
        body: None,
        status: 200,
        response: (JSON, None),
    },
    Operation {
        method: "get",
        path: "/api/debates",
        summary: "Every stored debate, newest first.",
        query: None,
        body: None,
        status: 200,
        response: (JSON, Some(of::<api::DebateList>)),
    },
    Operation {
        method: "post",
        path: "/api/debates",
        summary: "Starts a debate (as `agon debate`), run by this server.",
        query: None,
        body: Some(of::<crate::settings::NewDebate>),
        status: 201,
        response: (JSON, Some(of::<api::Started>)),
    },
    Operation {
        method: "get",
        path: "/api/debates/{id}",
        summary: "A debate: its status and the report's JSON.",
        query: None,
        body: None,
        status: 200,
        response: (JSON, Some(of::<api::DebateDetail>)),
    },
    Operation {
        method: "delete",
        path: "/api/debates/{id}",
        summary: "Deletes the debate with its vector memories (`agon delete`); one another live process runs is refused.",
        query: None,
        body: None,
        status: 200,
        response: (JSON, Some(of::<api::DeletedDebate>)),
    },
    Operation {
        method: "get",
        path: "/api/debates/{id}/export",
        summary: "The event log (`agon export`).",
        query: None,
        body: None,
        status: 200,
        response: (JSON, Some(of::<api::Document>)),
    },
    Operation {
        method: "get",
        path: "/api/debates/{id}/report",
        summary: "The Markdown report (`?format=json`: its JSON form).",
        query: Some(query::<crate::routes::ReportQuery>),
        body: None,
        status: 200,
        response: ("text/markdown", None),
    },
    Operation {
        method: "get",
        path: "/api/debates/{id}/metrics",
        summary: "The debate-quality metrics (`agon show --metrics --json`).",
        query: None,
        body: None,
        status: 200,
        response: (JSON, Some(of::<api::Document>)),
    },
    Operation {
        method: "get",
        path: "/api/debates/{id}/events",
        summary: "The live event stream (Server-Sent Events; `Last-Event-ID` resumes it).",
        query: Some(query::<crate::routes::After>),
        body: None,
        status: 200,
        response: ("text/event-stream", None),
    },
    Operation {
        method: "post",
        path: "/api/debates/{id}/stop",
        summary: "Stops the debate after its current step, wherever it runs (`agon stop`).",
        query: None,
        body: None,
        status: 202,
        response: (JSON, Some(of::<api::Stopping>)),
    },
    Operation {
        method: "post",
        path: "/api/debates/{id}/notes",
        summary: "A moderator note every agent's next context shows, wherever the debate runs (`agon note`).",
        query: None,
        body: Some(of::<crate::steer::Note>),
        status: 202,
        response: (JSON, Some(of::<api::Queued>)),
    },
    Operation {
        method: "post",
        path: "/api/debates/{id}/pause",
        summary: "Holds the debate before its next turn, wherever it runs (`agon pause`).",
        query: None,
        body: Some(of::<crate::steer::By>),
        status: 202,
        response: (JSON, Some(of::<api::Queued>)),
    },
    Operation {
        method: "post",
        path: "/api/debates/{id}/resume",
        summary: "Lifts a pause, or runs a debate that runs nowhere again (`agon resume`).",
        query: None,
        body: Some(of::<crate::steer::By>),
        status: 202,
        response: (JSON, Some(of::<api::Resumed>)),
    },
    Operation {
        method: "post",
        path: "/api/debates/{id}/fork",
        summary: "A new debate whose log is this one's up to an event (`agon fork`).",
        query: None,
        body: Some(of::<crate::steer::Fork>),
        status: 201,
        response: (JSON, Some(of::<api::Forked>)),
    },
    Operation {
        method: "get",
        path: "/api/debates/{id}/questions",
        summary: "The clarifying questions the debate waits on, wherever it runs.",
        query: None,
        body: None,
        status: 200,
        response: (JSON, Some(of::<api::Questions>)),
    },
    Operation {
        method: "post",
        path: "/api/debates/{id}/answers",
        summary: "Answers them, one per question in order (`agon answer`).",
        query: None,
        body: Some(of::<crate::routes::Answers>),
        status: 202,
        response: (JSON, Some(of::<api::Answered>)),
    },
    Operation {
        method: "post",
        path: "/api/debates/{id}/feedback",
        summary: "Rates the outcome (`agon feedback`).",
        query: None,
        body: Some(of::<crate::routes::Feedback>),
        status: 201,
        response: (JSON, Some(of::<api::Rated>)),
    },
    Operation {
        method: "post",
        path: "/api/debates/{id}/override",
        summary: "A person replaced the final output (`agon override`), with a rubric change to propose.",
        query: None,
        body: Some(of::<crate::agents::Override>),
        status: 201,
        response: (JSON, Some(of::<api::Overridden>)),
    },
    Operation {
        method: "get",
        path: "/api/agents",
        summary: "Every agent's trust memory.",
        query: None,
        body: None,
        status: 200,
        response: (JSON, Some(of::<api::Agents>)),
    },
    Operation {
        method: "get",
        path: "/api/agents/{name}",
        summary: "One agent's memory (`agon agents export`).",
        query: None,
        body: None,
        status: 200,
        response: (JSON, Some(of::<api::Document>)),
    },
    Operation {
        method: "get",
        path: "/api/rubrics/{name}",
        summary: "A living rubric's versions and proposals (`agon rubric history --json`).",
        query: None,
        body: None,
        status: 200,
        response: (JSON, Some(of::<api::Document>)),
    },
    Operation {
        method: "post",
        path: "/api/rubrics/{name}/proposals/{id}/accept",
        summary: "Accepts a proposed change (`agon rubric accept`): the rubric's new version.",
        query: None,
        body: None,
        status: 200,
        response: (JSON, Some(of::<api::RubricVersion>)),
    },
    Operation {
        method: "post",
        path: "/api/rubrics/{name}/proposals/{id}/reject",
        summary: "Rejects a proposed change (`agon rubric reject`).",
        query: None,
        body: Some(of::<crate::rubrics::Rejection>),
        status: 200,
        response: (JSON, Some(of::<api::Rejected>)),
    },
    Operation {
        method: "get",
        path: "/api/compare",
        summary: "The metrics of several debates side by side (`agon compare --json`).",
        query: Some(query::<crate::agents::Ids>),
        body: None,
        status: 200,
        response: (JSON, Some(of::<api::Comparison>)),
    },
    Operation {
        method: "get",
        path: "/api/recall",
        summary: "Recalls memories with their score components (`agon recall --json`).",
        query: Some(query::<crate::recall::RecallQuery>),
        body: None,
        status: 200,
        response: (JSON, Some(of::<api::Document>)),
    },
];

/// The path's `{parameters}`.
fn path_parameters(path: &str) -> Vec<Value> {
    path.split('/')
        .filter_map(|part| part.strip_prefix('{')?.strip_suffix('}'))
        .map(|name| json!({ "name": name, "in": "path", "required": true, "schema": { "type": "string" } }))
        .collect()
}

/// A query type's properties as query parameters.
fn query_parameters(schema: &Schema) -> Vec<Value> {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|props| {
            props
                .iter()
                .map(|(name, property)| {
                    json!({
                        "name": name,
                        "in": "query",
                        "required": required.contains(&name.as_str()),
                        "description": property.get("description").cloned().unwrap_or(Value::Null),
                        "schema": property,
                    })
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The route of the document.
pub(crate) fn routes() -> axum::Router {
    axum::Router::new().route("/api/openapi.json", axum::routing::get(served))
}

/// `GET /api/openapi.json`.
async fn served() -> axum::Json<Value> {
    axum::Json(document())
}

/// The OpenAPI document.
pub(crate) fn document() -> Value {
    let mut generator = SchemaSettings::openapi3().into_generator();
    let error = of::<api::ErrorBody>(&mut generator);
    let mut paths = Map::new();
    for op in OPERATIONS {
        let mut parameters = path_parameters(op.path);
        if let Some(query) = op.query {
            parameters.extend(query_parameters(&query(&mut generator)));
        }
        let mut operation = json!({
            "summary": op.summary,
            "operationId": format!("{}{}", op.method, op.path.replace(['/', '{', '}', '.'], "_")),
            "parameters": parameters,
            "responses": {
                op.status.to_string(): {
                    "description": op.summary,
                    "content": { op.response.0: { "schema": op.response.1.map_or(json!({}), |s| s(&mut generator).to_value()) } },
                },
                "default": {
                    "description": "An error naming what was wrong (the status says which kind).",
                    "content": { JSON: { "schema": error.clone().to_value() } },
                },
            },
        });
        if let Some(body) = op.body {
            operation["requestBody"] = json!({
                "required": true,
                "content": { JSON: { "schema": body(&mut generator).to_value() } },
            });
        }
        paths
            .entry(op.path)
            .or_insert_with(|| json!({}))
            .as_object_mut()
            .map(|methods| methods.insert(op.method.to_owned(), operation));
    }
    json!({
        "openapi": "3.0.3",
        "info": {
            "title": "Agon",
            "version": env!("CARGO_PKG_VERSION"),
            "description": "Memory-backed multi-agent debates: start, read, follow, steer and fork them (docs/api.md).",
        },
        "paths": paths,
        "components": {
            "schemas": generator.take_definitions(true),
            "securitySchemes": { "bearer": { "type": "http", "scheme": "bearer" } },
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_operation_has_its_schemas_and_every_reference_resolves() {
        let doc = document();
        let schemas = doc["components"]["schemas"]
            .as_object()
            .cloned()
            .unwrap_or_default();
        assert!(schemas.contains_key("DebateList"), "{schemas:?}");
        let text = doc.to_string();
        for reference in text.split("\"$ref\":\"#/components/schemas/").skip(1) {
            let name = reference.split('"').next().unwrap_or_default();
            assert!(schemas.contains_key(name), "unresolved reference to {name}");
        }
        let notes = &doc["paths"]["/api/debates/{id}/notes"]["post"];
        assert_eq!(notes["parameters"][0]["name"], "id");
        assert!(notes["requestBody"]["content"][JSON]["schema"]["$ref"].is_string());
        let recall = &doc["paths"]["/api/recall"]["get"]["parameters"];
        assert!(
            recall
                .as_array()
                .is_some_and(|p| p.iter().any(|p| p["name"] == "q" && p["required"] == true)),
            "{recall}"
        );
    }
}
