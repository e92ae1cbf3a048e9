"""What python-zeep, an independent SOAP client, makes of WSDLs: the oracle of the corpus tests (issue 9).

Usage:
  /usr/bin/python3 test/support/oracle/zeep_oracle.py URL [URL ...]
    Prints one JSON object: {URL: {"services": [{"name", "ports": [{"name", "soap_version", "operations"}]}]}
    or {URL: {"error": "..."}}. Only SOAP ports are listed (HTTP GET/POST bindings are not SOAP), operation names
    sorted and once each (an overloaded name is listed once, as Interchange's `operations` list does).

  /usr/bin/python3 test/support/oracle/zeep_oracle.py --samples URL [URL ...]
    Sample calls and the envelopes zeep builds for them. For every SOAP port, up to three operations (the first,
    the middle and the last of its sorted names) get params generated from zeep's own model of the input: every
    element with minOccurs >= 1 gets a value (string 'sample', integers 1, decimal/float/double 1.5, boolean true,
    date '2024-01-02', dateTime '2024-01-02T03:04:05', an enumeration its first value, complex types recursively to a
    depth of 6, a repeated element one item in a list), required attributes too. Prints
    {URL: [sample, ...]} or {URL: {"error": "..."}}; a sample is
    {"service", "port", "operation", "soap_version", "params", "envelope", "soap_action", "wsa_action"}
    or {"service", "port", "operation", "soap_version", "error"} when no sample could be made.
    `params` is the JSON Interchange takes for the same call: element name -> value (wrapper children for
    document/literal, part names for rpc), objects for complex values, lists for repeated elements, `$value` for the
    text of simple content and `$attributes` for attributes. `envelope` is the XML zeep builds for the binding
    operation, without zeep's WS-Addressing plugin: zeep adds wsa headers whenever the WSDL names a wsaw:Action
    (`wsa_action`, reported), a client-side policy with a random MessageID, not part of the envelope the WSDL
    prescribes. `soap_action` is the binding operation's soapAction ('' when none).

  /usr/bin/python3 test/support/oracle/zeep_oracle.py --answers URL [URL ...]
    Sample answers, the oracle of the answer side: for the same operations as --samples, the call's sample (as
    above) and an answer zeep builds from its own model of the output (the same generated values, for optional
    elements and attributes too, but for optional repeated groups), serialized as the
    envelope a server would send, then read back by zeep's binding (process_reply). Prints {URL: [answer, ...]};
    an answer is the sample's fields plus {"reply", "value"}, or {"service", "port", "operation", "soap_version",
    "error"}. `value` is zeep's result as JSON: serialize_object's dicts and lists, dates and times in ISO 8601,
    decimals as text, bytes as base64.

It runs offline: documents come only from 127.0.0.1 (the tests serve the corpus there); the two schemas zeep
fetches by itself are served from local copies: the SOAP encoding schema from Debian's python3-suds, and
xml.xsd from the corpus's _wellknown folder.
"""

import base64
import datetime
import json
import os
import re
import sys
from re import _constants, _parser
from decimal import Decimal
from urllib.parse import urlparse

import isodate

from lxml import etree
from suds import store
from zeep import Client, Settings
from zeep import xsd
from zeep.helpers import serialize_object
from zeep.transports import Transport
from zeep.wsdl.bindings.soap import Soap11Binding, Soap12Binding
from zeep.wsdl.messages import RpcMessage
from zeep.xsd.elements.any import Any
from zeep.xsd.elements.indicators import All, Choice, Group, Sequence
from zeep.xsd.types import builtins
from zeep.xsd.types.any import AnyType
from zeep.xsd.types.collection import ListType, UnionType
from zeep.xsd.types.unresolved import UnresolvedCustomType
from zeep.xsd.visitor import SchemaVisitor, tags

# The corpus folder the tests use (test/support/wsdl-corpus.ts passes it, absolute); by default the one beside the checkout.
CORPUS = os.environ.get("IX_WSDL_CORPUS") or os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "shared", "wsdl-corpus")
WELLKNOWN = os.path.join(CORPUS, "_wellknown")
SOAP_ENCODING = "http://schemas.xmlsoap.org/soap/encoding/"
XML_XSD = ("http://www.w3.org/2001/xml.xsd", "https://www.w3.org/2001/xml.xsd")
XSD_NS = "http://www.w3.org/2001/XMLSchema"
DEPTH_CAP = 6
ANY_SAMPLE, ANY_SAMPLE_NS = "sample", "urn:sample"
OPERATIONS_PER_PORT = 3


class OfflineTransport(Transport):
    """Loads documents from 127.0.0.1 and the two well-known schemas; refuses anything else."""

    def load(self, url):
        if url.rstrip("/") == SOAP_ENCODING.rstrip("/"):
            return store.soap5_encoding_schema
        if url in XML_XSD:
            with open(os.path.join(WELLKNOWN, "xml.xsd"), "rb") as handle:
                return handle.read()
        if urlparse(url).hostname not in ("127.0.0.1", "localhost"):
            raise IOError("offline oracle: refusing to fetch " + url)
        return super().load(url)


def soap_version(binding):
    if isinstance(binding, Soap12Binding):
        return "1.2"
    if isinstance(binding, Soap11Binding):
        return "1.1"
    return None


def load(url):
    return Client(url, transport=OfflineTransport(), settings=Settings(strict=False))


def describe(url):
    client = load(url)
    services = []
    for service in client.wsdl.services.values():
        ports = []
        for port in service.ports.values():
            version = soap_version(port.binding)
            if version is None:
                continue
            ports.append({"name": port.name, "soap_version": version, "operations": sorted(set(port.binding._operations))})
        services.append({"name": service.name, "ports": ports})
    return {"services": services}


# zeep reads enumerations but drops them (it does not validate facets): keep each simple type's enumeration values
# on the type, through zeep's resolution of named and anonymous simple types, so samples can use the first one.
_visit_simple_type = SchemaVisitor.visit_simple_type
_resolve_custom_type = UnresolvedCustomType.resolve


# The facets samples must fit (zeep does not check facets; Interchange does, before sending).
FACETS = ("length", "minLength", "maxLength", "pattern")


def _visit_simple_type_keeping_enumerations(self, node, parent):
    xsd_type = _visit_simple_type(self, node, parent)
    restriction = node.find("{%s}restriction" % XSD_NS)
    if restriction is not None:
        values = [e.get("value") for e in restriction.findall("{%s}enumeration" % XSD_NS)]
        if values:
            xsd_type.oracle_enumeration = values
        facets = {}
        for name in FACETS:
            found = restriction.find("{%s}%s" % (XSD_NS, name))
            if found is not None:
                facets[name] = found.get("value")
        if facets:
            xsd_type.oracle_facets = facets
    return xsd_type


def _resolve_keeping_enumerations(self):
    resolved = _resolve_custom_type(self)
    base = self.base_type.resolve()
    values = getattr(self, "oracle_enumeration", None) or getattr(base, "oracle_enumeration", None)
    if values:
        resolved.oracle_enumeration = values
    facets = {**getattr(base, "oracle_facets", {}), **getattr(self, "oracle_facets", {})}
    if facets:
        resolved.oracle_facets = facets
    return resolved


def pattern_sample(pattern, extra=0):
    """The shortest string an (XML Schema) pattern matches, built from Python's own parse of it: each repeat its
    minimum, a class its first character, an alternation its first branch; with `extra`, the first unbounded repeat
    repeated that many times more (to reach a length facet). Unsupported when that does not match."""
    produced = []
    stretch = [extra]

    def character_of(items):
        op, value = items[0]
        if op is _constants.LITERAL:
            return chr(value)
        if op is _constants.RANGE:
            return chr(value[0])
        if op is _constants.CATEGORY and value in CATEGORY_SAMPLES:
            return CATEGORY_SAMPLES[value]
        raise Unsupported("a pattern class the sample generator does not fill: %s" % pattern)

    def walk(items):
        for op, value in items:
            if op is _constants.LITERAL:
                produced.append(chr(value))
            elif op is _constants.ANY:
                produced.append("a")
            elif op is _constants.IN:
                produced.append(character_of(value))
            elif op in (_constants.MAX_REPEAT, _constants.MIN_REPEAT):
                low, high, sub = value
                times = low
                if high is _constants.MAXREPEAT and stretch[0] > 0:
                    times, stretch[0] = low + stretch[0], 0
                for _ in range(times):
                    walk(sub)
            elif op is _constants.SUBPATTERN:
                walk(value[-1])
            elif op is _constants.BRANCH:
                walk(value[1][0])
            elif op is _constants.CATEGORY and value in CATEGORY_SAMPLES:
                produced.append(CATEGORY_SAMPLES[value])
            else:
                raise Unsupported("a pattern the sample generator does not fill: %s" % pattern)

    walk(_parser.parse(pattern))
    sample = "".join(produced)
    if re.fullmatch(pattern, sample) is None:
        raise Unsupported("a pattern the sample generator does not fill: %s" % pattern)
    return sample


def fit_facets(lexical, facets):
    """The sample value made to fit a string type's facets: a pattern's shortest match, else 'sample' cut or
    repeated to the length the facets allow."""
    if "pattern" in facets:
        lexical = pattern_sample(facets["pattern"])
    length = int(facets["length"]) if "length" in facets else None
    low = int(facets.get("minLength", 0))
    high = int(facets["maxLength"]) if "maxLength" in facets else None
    wanted = length if length is not None else max(low, min(len(lexical), high if high is not None else len(lexical)))
    if len(lexical) < wanted and "pattern" in facets:
        lexical = pattern_sample(facets["pattern"], wanted - len(lexical))
    if len(lexical) != wanted:
        if "pattern" in facets:
            raise Unsupported("a pattern and a length the sample generator cannot fill together")
        lexical = (lexical * (wanted // max(len(lexical), 1) + 1))[:wanted]
    return lexical


SchemaVisitor.visit_simple_type = _visit_simple_type_keeping_enumerations
SchemaVisitor.visitors[tags.simpleType] = _visit_simple_type_keeping_enumerations
UnresolvedCustomType.resolve = _resolve_keeping_enumerations


CATEGORY_SAMPLES = {_constants.CATEGORY_DIGIT: "1", _constants.CATEGORY_SPACE: " ", _constants.CATEGORY_WORD: "a"}


class Unsupported(Exception):
    """The input has a shape the sample generator does not fill (said in the sample's error)."""


# Lexical sample values by built-in type, most derived first (isinstance order matters: Integer is a Decimal).
LEXICAL = [
    (builtins.Boolean, "true"),
    (builtins.Integer, "1"),
    (builtins.Decimal, "1.5"),
    (builtins.Float, "1.5"),
    (builtins.Double, "1.5"),
    (builtins.DateTime, "2024-01-02T03:04:05"),
    (builtins.Date, "2024-01-02"),
    (builtins.Time, "03:04:05"),
    (builtins.Duration, "P1D"),
    (builtins.gYearMonth, "2024-01"),
    (builtins.gYear, "2024"),
    (builtins.gMonthDay, "--01-02"),
    (builtins.gDay, "---02"),
    (builtins.gMonth, "--01"),
    (builtins.HexBinary, "73616D706C65"),
    (builtins.Base64Binary, "c2FtcGxl"),
    (builtins.AnyURI, "http://example.com/sample"),
]
# zeep's Python value for these is a tuple, not the lexical string.
PARSED = (builtins.gYearMonth, builtins.gYear, builtins.gMonthDay, builtins.gDay, builtins.gMonth)


def json_scalar(xsd_type, lexical):
    """The lexical value as JSON gives it: numbers and booleans typed, the rest strings."""
    if isinstance(xsd_type, builtins.Boolean):
        return lexical == "true"
    if isinstance(xsd_type, builtins.Integer):
        return int(lexical)
    if isinstance(xsd_type, (builtins.Decimal, builtins.Float, builtins.Double)):
        return float(lexical)
    return lexical


def simple_sample(xsd_type):
    """(zeep value, JSON value) for a simple type."""
    if isinstance(xsd_type, UnionType):
        return simple_sample(xsd_type.item_types[0])
    if isinstance(xsd_type, ListType):
        zeep_value, json_value = simple_sample(xsd_type.item_type)
        return [zeep_value], str(json_value).lower() if isinstance(json_value, bool) else str(json_value)
    enumeration = getattr(xsd_type, "oracle_enumeration", None)
    lexical = enumeration[0] if enumeration else next((v for t, v in LEXICAL if isinstance(xsd_type, t)), "sample")
    facets = getattr(xsd_type, "oracle_facets", None)
    if facets and not enumeration and lexical == "sample":
        lexical = fit_facets(lexical, facets)
    zeep_value = xsd_type.pythonvalue(lexical) if isinstance(xsd_type, PARSED) else lexical
    if isinstance(xsd_type, builtins.Decimal) and not isinstance(xsd_type, builtins.Integer):
        zeep_value = Decimal(lexical)
    return zeep_value, json_scalar(xsd_type, lexical)


def type_sample(xsd_type, depth):
    """(zeep value, JSON value) for any type."""
    if isinstance(xsd_type, xsd.ComplexType):
        if xsd_type._array_type:  # a SOAP-encoded array (soapenc:Array): one item, as a list
            item_type = xsd_type._array_type.array_type
            zeep_item, json_item = type_sample(item_type, depth + 1) if item_type is not None else ("sample", "sample")
            if isinstance(zeep_item, dict):  # zeep renders array items as given: a complex one must be its object
                zeep_item = item_type(**zeep_item)
            return [zeep_item], [json_item]
        zeep_value, json_value = {}, {}
        encoding = xsd_type.qname is not None and xsd_type.qname.namespace == SOAP_ENCODING
        for name, attribute in xsd_type.attributes:
            # SOAP encoding's own attributes (id, href) are its reference machinery, not data: never sampled.
            optional = FILL["optional"] and hasattr(attribute, "type") and not encoding
            wanted = getattr(attribute, "required", False) or optional
            if wanted and attribute.name is not None:
                zeep_value[name], attribute_json = simple_sample(attribute.type)
                json_value.setdefault("$attributes", {})[attribute.name] = attribute_json
        content = xsd_type._element
        if isinstance(content, xsd.Element) and isinstance(content.type, xsd.ComplexType):
            # zeep's model of an extension that adds no content to a complex base: the base's content as `_value_1`
            base_zeep, base_json = type_sample(content.type, depth)
            if base_zeep:
                zeep_value["_value_1"] = base_zeep
                json_value.update(base_json)
        elif isinstance(content, xsd.Element):  # simple content: zeep's `_value_1` is the element's text
            zeep_value["_value_1"], json_value["$value"] = simple_sample(content.type)
        elif content is not None:
            fill_particle(content, depth, zeep_value, json_value)
        return zeep_value, json_value
    if isinstance(xsd_type, AnyType) and not isinstance(xsd_type, xsd.AnySimpleType):
        return "sample", "sample"
    return simple_sample(xsd_type)


# Whether samples fill optional elements and attributes too (answers do, so that they carry what a server sends).
FILL = {"optional": False}


def fill_element(element, depth, zeep_kwargs, json_params, force=False):
    if element.min_occurs < 1 and not force:
        if FILL["optional"] and depth < DEPTH_CAP and element.attr_name not in zeep_kwargs:
            # An optional element whose content cannot be made (too deep, say) is left out, as a server may.
            zeep_value, json_value = {}, {}
            try:
                fill_required(element, depth, zeep_value, json_value)
            except Unsupported:
                return
            zeep_kwargs.update(zeep_value)
            json_params.update(json_value)
        return
    fill_required(element, depth, zeep_kwargs, json_params)


def fill_required(element, depth, zeep_kwargs, json_params):
    name = element.attr_name
    if name in zeep_kwargs:
        raise Unsupported("two elements named %s in one type" % name)
    if depth >= DEPTH_CAP:
        if not element.nillable:
            raise Unsupported("a required element deeper than %d levels: %s" % (DEPTH_CAP, name))
        zeep_kwargs[name], json_params[name] = None, None
        return
    zeep_value, json_value = type_sample(element.type, depth + 1)
    if element.accepts_multiple:
        zeep_value, json_value = [zeep_value], [json_value]
    zeep_kwargs[name], json_params[name] = zeep_value, json_value


def fill_any(particle, name, zeep_kwargs, json_params):
    """A required xsd:any gets one element in a namespace of its own, `<sample xmlns="urn:sample">sample</sample>`:
    zeep takes it as an lxml element under its kwarg name (`_value_N`), Interchange's params as raw mode writes it."""
    if name is None or ANY_SAMPLE in json_params:
        raise Unsupported("an xsd:any zeep gives no kwarg name (a choice option, or two in one type)")
    node = etree.Element("{%s}%s" % (ANY_SAMPLE_NS, ANY_SAMPLE))
    node.text = "sample"
    value = {"$attributes": {"xmlns": ANY_SAMPLE_NS}, "$value": "sample"}
    zeep_kwargs[name], json_params[ANY_SAMPLE] = ([node], [value]) if particle.accepts_multiple else (node, value)


def fill_particle(particle, depth, zeep_kwargs, json_params, force=False, name=None):
    """Adds the values of a particle's required content: a sequence's and all's required items, a required choice's
    first option, a required element or xsd:any (`name`: zeep's kwarg name for it)."""
    if isinstance(particle, xsd.Element):
        fill_element(particle, depth, zeep_kwargs, json_params, force)
        return
    if isinstance(particle, Any):
        if particle.min_occurs >= 1 or force:
            fill_any(particle, name, zeep_kwargs, json_params)
        return
    if particle.min_occurs < 1 and not force and not FILL["optional"]:
        return
    if particle.accepts_multiple:
        if FILL["optional"] and particle.min_occurs < 1:
            return  # zeep takes a repeated group's items in a shape of its own: left out of answers when it may be
        raise Unsupported("a repeated %s in the input" % type(particle).__name__.lower())
    if isinstance(particle, Group):
        fill_particle(particle.child, depth, zeep_kwargs, json_params, force)
    elif isinstance(particle, Choice):
        if len(particle) > 0:
            fill_particle(particle[0], depth, zeep_kwargs, json_params, force=True)
    elif isinstance(particle, (Sequence, All)):
        for item_name, item in particle.elements_nested:
            fill_particle(item, depth, zeep_kwargs, json_params, name=item_name)
    else:
        raise Unsupported("an unknown particle %r" % particle)


def sample_operations(binding):
    names = sorted(set(binding._operations))
    picks = sorted({0, len(names) // 2, len(names) - 1}) if names else []
    return [names[i] for i in picks][:OPERATIONS_PER_PORT]


def rpc_params(message, params):
    """An rpc call's params by part name: zeep names a part declared with element= (which WS-I R2203 forbids in
    rpc) by its element's name."""
    names = {}
    for part_name, part in message.abstract.parts.items():
        if part.element is not None:
            names[part.element.attr_name] = part_name
    return {names.get(key, key): value for key, value in params.items()}


def sample_call(binding, operation_name):
    operation = binding._operations[operation_name]
    message = operation.input
    body = message.body if message is not None else None
    zeep_args, zeep_kwargs, params = [], {}, {}
    if body is not None:
        if message._is_body_wrapped:
            raise Unsupported("a document/literal input of several parts")
        if isinstance(body.type, xsd.ComplexType):
            zeep_kwargs, params = type_sample(body.type, 0)
            if isinstance(message, RpcMessage):
                params = rpc_params(message, params)
        else:  # document/literal bare, an element of a simple type: its text, as raw mode's `$value` says it
            zeep_value, params["$value"] = simple_sample(body.type)
            zeep_args.append(zeep_value)
    # The headers the binding declares (soap:header): each header element with its required content, as zeep takes
    # them in _soapheaders and Interchange in soap_headers.
    header = getattr(message, "header", None) if message is not None else None
    soap_headers = {}
    if header is not None and isinstance(header.type, xsd.ComplexType):
        header_kwargs, soap_headers = type_sample(header.type, 0)
        if header_kwargs:
            zeep_kwargs["_soapheaders"] = header_kwargs
    serialized = operation.create(*zeep_args, **zeep_kwargs)
    return {
        "params": params,
        "soap_headers": soap_headers,
        "envelope": etree.tostring(serialized.content, encoding="unicode"),
        "soap_action": operation.soapaction or "",
        "wsa_action": operation.abstract.wsa_action,
    }


def sampled(url, build):
    """For each SOAP port's sampled operations (sample_operations), {service, port, operation, soap_version} and what
    `build(client, binding, name)` adds, or "error" in its place when it raises."""
    client = load(url)
    result = []
    for service in client.wsdl.services.values():
        for port in service.ports.values():
            version = soap_version(port.binding)
            if version is None:
                continue
            for name in sample_operations(port.binding):
                entry = {"service": service.name, "port": port.name, "operation": name, "soap_version": version}
                try:
                    entry.update(build(client, port.binding, name))
                except Exception as error:  # a sample zeep cannot build is data, not a failure of the oracle
                    entry["error"] = "%s: %s" % (type(error).__name__, str(error)[:300])
                result.append(entry)
    return result


def samples(url):
    return sampled(url, lambda client, binding, name: sample_call(binding, name))


def jsonable(value):
    """zeep's Python values as JSON: dates, times and durations in ISO 8601, decimals as their text, bytes as base64,
    lxml elements (what an xsd:any holds) as {"$xml": their XML}."""
    if isinstance(value, dict):
        return {key: jsonable(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(item) for item in value]
    if isinstance(value, (datetime.datetime, datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, (datetime.timedelta, isodate.Duration)):
        return isodate.duration_isoformat(value)
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, etree._Element):
        return {"$xml": etree.tostring(value, encoding="unicode")}
    return value


def answer_sample(client, binding, operation_name):
    """An answer to the operation built by zeep from its model of the output, and zeep's own reading of it."""
    operation = binding._operations[operation_name]
    message = operation.output
    if message is None:
        raise Unsupported("a one-way operation")
    body = message.body
    args, kwargs = [], {}
    if body is not None:
        if message._is_body_wrapped:
            raise Unsupported("a document/literal output of several parts")
        FILL["optional"] = True
        try:
            if isinstance(body.type, xsd.ComplexType):
                kwargs, _ = type_sample(body.type, 0)
            else:
                value, _ = simple_sample(body.type)
                args.append(value)
        finally:
            FILL["optional"] = False
    reply = etree.tostring(message.serialize(*args, **kwargs).content, encoding="unicode")
    read = binding.process_reply(client, operation, _Reply(reply.encode("utf-8")))
    return {"reply": reply, "value": jsonable(serialize_object(read))}


def answers(url):
    return sampled(url, lambda client, binding, name: {**sample_call(binding, name), **answer_sample(client, binding, name)})


class _Reply:
    """An HTTP answer as zeep's binding reads one: a 200 with the envelope given."""

    def __init__(self, content):
        self.status_code = 200
        self.content = content
        self.headers = {"Content-Type": "text/xml; charset=utf-8"}
        self.encoding = "utf-8"


def replies(calls):
    """zeep's reading of answers: for each `{wsdl, operation, reply}`, what zeep's binding deserializes the envelope
    `reply` to (serialize_object: lists, dicts, strings and numbers), or the error it raised."""
    result = []
    for call in calls:
        try:
            client = load(call["wsdl"])
            binding = client.service._binding
            read = binding.process_reply(client, binding.get(call["operation"]), _Reply(call["reply"].encode("utf-8")))
            result.append({"value": json.loads(json.dumps(serialize_object(read), default=str))})
        except Exception as error:  # data, as everywhere in this oracle
            result.append({"error": "%s: %s" % (type(error).__name__, str(error)[:300])})
    return result


def main(argv):
    if argv[:1] == ["--replies"]:
        json.dump(replies(json.load(sys.stdin)), sys.stdout)
        return
    modes = {"--samples": samples, "--answers": answers}
    mode, urls = (modes[argv[0]], argv[1:]) if argv[:1] and argv[0] in modes else (describe, argv)
    result = {}
    for url in urls:
        try:
            result[url] = mode(url)
        except Exception as error:  # the oracle reports, it does not judge: any failure is data
            result[url] = {"error": "%s: %s" % (type(error).__name__, str(error)[:300])}
    json.dump(result, sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1:])
