"""A JSON Schema checker for the keywords the project's schemas (docs/schemas) use: type, const,
enum, required, properties, additionalProperties (false or a schema), propertyNames, items,
maxItems, minimum, exclusiveMinimum, minLength, oneOf and local $ref. Another keyword in a schema
is an error, so a schema cannot silently ask for more than is checked. errors(instance, schema)
returns one line per violation, each with its JSON path."""

KEYWORDS = {"$schema", "$id", "$defs", "$comment", "title", "description", "type", "const", "enum", "required",
            "properties", "additionalProperties", "propertyNames", "items", "maxItems", "minimum", "exclusiveMinimum",
            "minLength", "oneOf", "$ref"}
TYPES = {"object": dict, "array": list, "string": str, "boolean": bool, "null": type(None)}


def has_type(value, name):
    if name == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if name == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return isinstance(value, TYPES[name])


def errors(instance, schema, root=None, path="$"):
    root = schema if root is None else root
    unknown = set(schema) - KEYWORDS
    if unknown:
        return [f"{path}: schema keyword(s) {sorted(unknown)} are not checked by schema_check.py"]
    if "$ref" in schema:
        target = root
        for part in schema["$ref"].removeprefix("#/").split("/"):
            target = target[part]
        return errors(instance, target, root, path)
    found = []
    if "type" in schema:
        names = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if not any(has_type(instance, n) for n in names):
            return [f"{path}: {instance!r:.60} is not {' or '.join(names)}"]
    if "const" in schema and instance != schema["const"]:
        found.append(f"{path}: {instance!r:.60} is not {schema['const']!r}")
    if "enum" in schema and instance not in schema["enum"]:
        found.append(f"{path}: {instance!r:.60} is not one of {schema['enum']}")
    if "minimum" in schema and has_type(instance, "number") and instance < schema["minimum"]:
        found.append(f"{path}: {instance} is below {schema['minimum']}")
    if "exclusiveMinimum" in schema and has_type(instance, "number") and instance <= schema["exclusiveMinimum"]:
        found.append(f"{path}: {instance} is not above {schema['exclusiveMinimum']}")
    if "minLength" in schema and isinstance(instance, str) and len(instance) < schema["minLength"]:
        found.append(f"{path}: shorter than {schema['minLength']}")
    if "oneOf" in schema:
        matching = [s for s in schema["oneOf"] if not errors(instance, s, root, path)]
        if len(matching) != 1:
            found.append(f"{path}: matches {len(matching)} of oneOf's schemas")
    if isinstance(instance, dict):
        for key in schema.get("required", []):
            if key not in instance:
                found.append(f"{path}: missing {key!r}")
        properties = schema.get("properties", {})
        extra = schema.get("additionalProperties", True)
        for key, value in instance.items():
            if "propertyNames" in schema:
                found += errors(key, schema["propertyNames"], root, f"{path}.{key} (name)")
            if key in properties:
                found += errors(value, properties[key], root, f"{path}.{key}")
            elif extra is False:
                found.append(f"{path}: unexpected key {key!r}")
            elif isinstance(extra, dict):
                found += errors(value, extra, root, f"{path}.{key}")
    if isinstance(instance, list):
        if "maxItems" in schema and len(instance) > schema["maxItems"]:
            found.append(f"{path}: {len(instance)} items, at most {schema['maxItems']}")
        for i, item in enumerate(instance):
            if "items" in schema:
                found += errors(item, schema["items"], root, f"{path}[{i}]")
    return found
