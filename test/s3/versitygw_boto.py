"""boto3 against the versitygw server of test/s3/versitygw.sh (run in test/s3's virtualenv).

usage: versitygw_boto.py mkbucket BUCKET...        create the buckets
       versitygw_boto.py get BUCKET KEY            the object's bytes on stdout
       versitygw_boto.py put BUCKET KEY            stdin's bytes as the object
       versitygw_boto.py list BUCKET PREFIX        the keys under PREFIX, one a line (UTF-8)

The endpoint and key come from S3_ENDPOINT, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and
AWS_REGION. botocore signs every request (SigV4, path-style); versitygw checks it. A failed
request exits 1 with the S3 error code on stderr.
"""
import os
import sys

import boto3
from botocore.config import Config
from botocore.exceptions import ClientError


def client():
    return boto3.client("s3", endpoint_url=os.environ["S3_ENDPOINT"],
                        region_name=os.environ.get("AWS_REGION", "us-east-1"),
                        aws_access_key_id=os.environ["AWS_ACCESS_KEY_ID"],
                        aws_secret_access_key=os.environ["AWS_SECRET_ACCESS_KEY"],
                        config=Config(s3={"addressing_style": "path"},
                                      retries={"max_attempts": 1}))


def main(argv):
    s3 = client()
    verb = argv[0] if argv else ""
    if verb == "mkbucket":
        for b in argv[1:]:
            s3.create_bucket(Bucket=b)
    elif verb == "get" and len(argv) == 3:
        sys.stdout.buffer.write(s3.get_object(Bucket=argv[1], Key=argv[2])["Body"].read())
    elif verb == "put" and len(argv) == 3:
        s3.put_object(Bucket=argv[1], Key=argv[2], Body=sys.stdin.buffer.read())
    elif verb == "list" and len(argv) == 3:
        for page in s3.get_paginator("list_objects_v2").paginate(Bucket=argv[1], Prefix=argv[2]):
            for o in page.get("Contents", []):
                sys.stdout.buffer.write(o["Key"].encode() + b"\n")
    else:
        sys.stderr.write(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except ClientError as e:
        sys.stderr.write(f"{e.response['Error'].get('Code')}: {e}\n")
        sys.exit(1)
