"""What python-zeep, an independent SOAP client, makes of WSDLs: the oracle of the corpus tests (issue 9).

Usage: /usr/bin/python3 test/oracle/zeep_oracle.py URL [URL ...]
Prints one JSON object: {URL: {"services": [{"name", "ports": [{"name", "soap_version", "operations"}]}]}
or {URL: {"error": "..."}}. Only SOAP ports are listed (HTTP GET/POST bindings are not SOAP), operation names
sorted and once each (an overloaded name is listed once, as Interchange's `operations` list does).

It runs offline: documents come only from 127.0.0.1 (the tests serve the corpus there); the two schemas zeep
fetches by itself are served from local copies: the SOAP encoding schema from Debian's python3-suds, and
xml.xsd from the corpus's _wellknown folder.
"""

import json
import os
import sys
from urllib.parse import urlparse

from suds import store
from zeep import Client, Settings
from zeep.transports import Transport
from zeep.wsdl.bindings.soap import Soap11Binding, Soap12Binding

WELLKNOWN = os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared", "wsdl-corpus", "_wellknown")
SOAP_ENCODING = "http://schemas.xmlsoap.org/soap/encoding/"
XML_XSD = ("http://www.w3.org/2001/xml.xsd", "https://www.w3.org/2001/xml.xsd")


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


def describe(url):
    client = Client(url, transport=OfflineTransport(), settings=Settings(strict=False))
    services = []
    for service in client.wsdl.services.values():
        ports = []
        for port in service.ports.values():
            binding = port.binding
            if isinstance(binding, Soap12Binding):
                version = "1.2"
            elif isinstance(binding, Soap11Binding):
                version = "1.1"
            else:
                continue
            ports.append({"name": port.name, "soap_version": version, "operations": sorted(set(binding._operations))})
        services.append({"name": service.name, "ports": ports})
    return {"services": services}


def main(urls):
    result = {}
    for url in urls:
        try:
            result[url] = describe(url)
        except Exception as error:  # the oracle reports, it does not judge: any failure is data
            result[url] = {"error": "%s: %s" % (type(error).__name__, str(error)[:300])}
    json.dump(result, sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1:])
