"""Set up a fresh moto S3 server for skade's tests (test/s3/lib.sh).

moto runs with INITIAL_NO_AUTH_ACTION_COUNT=3: the first three requests
(create an IAM user, give it S3 rights, create its access key) go
unchecked; every later request must carry a valid SigV4 signature of that
key, as on AWS (a wrong secret is 403 SignatureDoesNotMatch).

usage: moto_setup.py ENDPOINT DIR BUCKET...
writes DIR/credentials (AWS shared-credentials format, [default]) and
DIR/s3.env (shell assignments: S3_ENDPOINT, AWS_ACCESS_KEY_ID,
AWS_SECRET_ACCESS_KEY, AWS_REGION) and creates the buckets.
"""
import json
import os
import sys

import boto3

endpoint, out = sys.argv[1], sys.argv[2]
buckets = sys.argv[3:]
region = "us-east-1"
iam = boto3.client("iam", endpoint_url=endpoint, region_name=region,
                   aws_access_key_id="setup", aws_secret_access_key="setup")
iam.create_user(UserName="skade")
iam.put_user_policy(UserName="skade", PolicyName="s3", PolicyDocument=json.dumps({
    "Version": "2012-10-17",
    "Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}]}))
key = iam.create_access_key(UserName="skade")["AccessKey"]
s3 = boto3.client("s3", endpoint_url=endpoint, region_name=region,
                  aws_access_key_id=key["AccessKeyId"],
                  aws_secret_access_key=key["SecretAccessKey"])
for b in buckets:
    s3.create_bucket(Bucket=b)

umask = os.umask(0o077)
with open(os.path.join(out, "credentials"), "w") as f:
    f.write("[default]\naws_access_key_id = %s\naws_secret_access_key = %s\n"
            % (key["AccessKeyId"], key["SecretAccessKey"]))
os.umask(umask)
with open(os.path.join(out, "s3.env"), "w") as f:
    f.write("S3_ENDPOINT=%s\nAWS_ACCESS_KEY_ID=%s\nAWS_SECRET_ACCESS_KEY=%s\nAWS_REGION=%s\n"
            % (endpoint, key["AccessKeyId"], key["SecretAccessKey"], region))
