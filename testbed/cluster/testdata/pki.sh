set -e
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 3650 -keyout ca.key -out ca.crt -subj /CN=aether-local-ca 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout server.key -out server.csr -subj '/CN=kube-apiserver' 2>/dev/null
printf 'subjectAltName=IP:10.215.0.2,IP:127.0.0.1,IP:10.214.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local\nextendedKeyUsage=serverAuth\n' > server.ext
openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 3650 -extfile server.ext -out server.crt 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout admin.key -out admin.csr -subj '/O=system:masters/CN=aether-admin' 2>/dev/null
printf 'extendedKeyUsage=clientAuth\n' > admin.ext
openssl x509 -req -in admin.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 3650 -extfile admin.ext -out admin.crt 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout apiserver-kubelet.key -out apiserver-kubelet.csr -subj '/O=system:masters/CN=kube-apiserver' 2>/dev/null
printf 'extendedKeyUsage=clientAuth\n' > apiserver-kubelet.ext
openssl x509 -req -in apiserver-kubelet.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 3650 -extfile apiserver-kubelet.ext -out apiserver-kubelet.crt 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout kubelet.key -out kubelet.csr -subj '/O=system:nodes/CN=system:node:aether-node' 2>/dev/null
printf 'extendedKeyUsage=clientAuth\n' > kubelet.ext
openssl x509 -req -in kubelet.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 3650 -extfile kubelet.ext -out kubelet.crt 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout kubelet-serving.key -out kubelet-serving.csr -subj '/CN=aether-node' 2>/dev/null
printf 'subjectAltName=IP:10.215.0.2,DNS:aether-node\nextendedKeyUsage=serverAuth\n' > kubelet-serving.ext
openssl x509 -req -in kubelet-serving.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 3650 -extfile kubelet-serving.ext -out kubelet-serving.crt 2>/dev/null
openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out sa.key 2>/dev/null
openssl pkey -in sa.key -pubout -out sa.pub
chmod 600 *.key
