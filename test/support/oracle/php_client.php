<?php
/**
 * What PHP's SoapClient (ext/soap, a SOAP client written in C, from Debian's php-soap) makes of calls and answers:
 * a second oracle beside python-zeep, for what zeep cannot read (xs:union values, document-style outputs of several
 * parts).
 *
 *   php test/support/oracle/php_client.php < calls.json
 *
 * reads [{"wsdl": URL or path, "operation": name, "params": {...}, "reply": envelope}, ...] and prints, for each,
 * {"request": the envelope SoapClient sends for `params`, "result": what it reads `reply` to} or {"error": "..."}.
 * Nothing is sent anywhere: the request is captured and `reply` answers it.
 *
 *   php test/support/oracle/php_client.php --functions URL [URL ...]
 *
 * prints {URL: [operation name, ...] (sorted, each once) or {"error": "..."}}: the operations SoapClient offers.
 */

class CapturingClient extends SoapClient
{
    public string $sent = '';
    public string $reply = '';

    public function __doRequest($request, $location, $action, $version, $oneWay = false): ?string
    {
        $this->sent = $request;
        return $this->reply;
    }
}

/** JSON objects as PHP arrays, recursively (SoapClient takes arrays for complex values). */
function as_params($value)
{
    return json_decode(json_encode($value), true);
}

if (($argv[1] ?? '') === '--functions') {
    $out = [];
    foreach (array_slice($argv, 2) as $url) {
        try {
            $client = new SoapClient($url, ['cache_wsdl' => WSDL_CACHE_NONE, 'exceptions' => true]);
            $names = [];
            foreach ($client->__getFunctions() as $function) {
                if (preg_match('/^\S+\s+([^\s(]+)\(/', $function, $match)) $names[$match[1]] = true;
            }
            $names = array_keys($names);
            sort($names);
            $out[$url] = $names;
        } catch (Throwable $error) {
            $out[$url] = ['error' => get_class($error) . ': ' . substr($error->getMessage(), 0, 300)];
        }
    }
    echo json_encode($out);
    exit(0);
}

$calls = json_decode(stream_get_contents(STDIN), true);
$out = [];
foreach ($calls as $call) {
    try {
        $client = new CapturingClient($call['wsdl'], ['trace' => 1, 'cache_wsdl' => WSDL_CACHE_NONE, 'exceptions' => true]);
        $client->reply = $call['reply'] ?? '';
        $result = $client->__soapCall($call['operation'], [as_params($call['params'] ?? new stdClass())]);
        $out[] = ['request' => $client->sent, 'result' => json_decode(json_encode($result), true)];
    } catch (Throwable $error) {
        $out[] = ['error' => get_class($error) . ': ' . substr($error->getMessage(), 0, 300)];
    }
}
echo json_encode($out);
